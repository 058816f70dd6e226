"""The developer loop: printed URLs follow LMS_BIND, `make serve` keeps the demo's tokens,
the admin's "View site" opens the API docs, and the Swagger UI does not pre-fill `sort`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from tests.factories import UserFactory

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("bind", "base"),
    [
        (None, "http://127.0.0.1:8000"),
        ("127.0.0.1:9123", "http://127.0.0.1:9123"),
        ("0.0.0.0:8080", "http://127.0.0.1:8080"),
        ("localhost:7000", "http://localhost:7000"),
    ],
)
def test_seed_demo_prints_urls_where_the_server_listens(monkeypatch, capsys, bind, base):
    if bind is None:
        monkeypatch.delenv("LMS_BIND", raising=False)
    else:
        monkeypatch.setenv("LMS_BIND", bind)
    call_command("seed_demo")
    out = capsys.readouterr().out
    assert f"{base}/api/bundles?search=python" in out
    assert f"{base}/api/docs/" in out and f"{base}/admin/" in out
    assert ":8000" not in out or base.endswith(":8000")


@pytest.mark.parametrize(("target", "seeds"), [("run", True), ("serve", False)])
@pytest.mark.processes
def test_make_serve_does_not_re_seed_and_both_follow_lms_bind(target, seeds):
    done = subprocess.run(
        ["make", "-n", target, "LMS_BIND=0.0.0.0:9001"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert ("manage.py seed_demo" in done.stdout) is seeds
    assert "http://127.0.0.1:9001" in done.stdout
    assert "gunicorn -c gunicorn.conf.py" in done.stdout


@pytest.mark.django_db
def test_view_site_opens_the_api_docs():
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = client.get("/admin/").content.decode()
    assert 'href="/api/docs/"' in page


@pytest.mark.django_db
def test_the_sort_parameter_has_no_value_the_swagger_ui_would_pre_fill():
    schema = Client().get("/api/schema/", {"format": "json"}).json()
    parameters = schema["paths"]["/api/bundles"]["get"]["parameters"]
    sort = next(p for p in parameters if p["name"] == "sort")
    assert "example" not in sort and "example" not in sort["schema"]
    assert "examples" not in sort
    assert "name,-createdAt" in sort["schema"].get("description", "") + sort.get("description", "")
