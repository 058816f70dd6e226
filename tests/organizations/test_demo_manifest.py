"""Discovery for newcomers: seed_demo keeps its manifest in var/demo.json (mode 0600), and
``demo_manifest`` (run by ``make serve``) prints it again, with the ids a first call needs,
without issuing or revoking anything; ``/`` leads to the API docs."""

from __future__ import annotations

import json
import stat
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from organizations.models import ApiToken

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def manifest_path(settings, tmp_path) -> Path:
    settings.LMS_DEMO_MANIFEST = tmp_path / "var" / "demo.json"
    return settings.LMS_DEMO_MANIFEST


def live_tokens() -> set[str]:
    return {t.key_hash for t in ApiToken.all_orgs.all() if t.is_active}


def first_ids(manifest: dict) -> list[str]:
    org = manifest["org"]
    course = org["courses"][0]
    return [
        course["id"],
        *course["rules"].values(),
        org["downloads"][0],
        org["assets"][0],
        org["invites"]["pending"],
    ]


def test_seed_demo_writes_its_manifest_readable_by_its_owner_only(manifest_path):
    printed = json.loads(run("seed_demo", "--json")[0])
    assert json.loads(manifest_path.read_text()) == printed
    assert stat.S_IMODE(manifest_path.stat().st_mode) == 0o600
    again = json.loads(run("seed_demo", "--json")[0])
    assert json.loads(manifest_path.read_text()) == again != printed


def test_demo_manifest_prints_it_again_and_revokes_nothing(api, manifest_path):
    seeded = json.loads(run("seed_demo", "--json")[0])
    before = live_tokens()
    out, err = run("demo_manifest", "--json")
    assert json.loads(out) == seeded
    assert err == ""
    assert live_tokens() == before
    learner = seeded["org"]["tokens"]["learner"]
    assert api.get("/api/bundles", token=learner).status_code == 200


def test_the_summary_names_the_file_and_the_ids_of_a_first_call(manifest_path):
    seeded_out, _ = run("seed_demo")
    manifest = json.loads(manifest_path.read_text())
    shown, _ = run("demo_manifest")
    for out in (seeded_out, shown):
        assert str(manifest_path) in out
        for value in first_ids(manifest):
            assert value in out, value
        for rule in ("view", "time", "media", "pages", "score", "reported"):
            assert f"({rule} rule)" in out
        assert manifest["org"]["tokens"]["learner"] in out
        assert manifest["superuser"]["password"] in out
    assert f"GET /api/downloads/{manifest['org']['downloads'][0]}/assets" in shown


def test_without_a_manifest_it_says_how_to_make_one(manifest_path):
    with pytest.raises(CommandError, match="seed the demo data first"):
        run("demo_manifest")


def test_a_manifest_whose_tokens_were_revoked_is_flagged(manifest_path):
    run("seed_demo", "--json")
    old = manifest_path.read_text()
    run("seed_demo", "--json")
    manifest_path.write_text(old)
    out, err = run("demo_manifest", "--json")
    assert json.loads(out) == json.loads(old)
    assert "no longer work" in err


@pytest.mark.parametrize(("target", "prints"), [("run", "seed_demo"), ("serve", "demo_manifest")])
@pytest.mark.processes
def test_make_run_and_serve_print_the_manifest(target, prints):
    done = subprocess.run(
        ["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert f"manage.py {prints}" in done.stdout
    if target == "serve":
        # Reading the manifest again issues nothing: the printed tokens keep working.
        assert "seed_demo" not in done.stdout


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_the_root_leads_to_the_api_docs(method):
    response = Client().generic(method, "/")
    assert response.status_code == 302
    assert response["Location"] == "/api/docs/"
    assert Client().get(response["Location"]).status_code == 200


def test_other_unknown_pages_stay_404():
    for url in ("/index.html", "/api", "/docs/"):
        response = Client().get(url)
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"
