"""Logs a person can read while developing: no access line per static file in `make run` and
`make serve` (production keeps them), gunicorn's start line names its address, and a failing
readiness probe is one WARNING line, not a traceback."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.processes import HOST, free_port, get, gunicorn_server, stop, wait_for
from harness.servers import base_env, run_django

ROOT = Path(__file__).resolve().parents[2]
STATIC = "/static/admin/css/base.css"


def access_paths(caplog) -> list[str]:
    return [r.path for r in caplog.records if r.name == "lms.access"]


@pytest.mark.django_db
@pytest.mark.parametrize("log_static", [True, False])
def test_static_files_are_logged_unless_turned_off(api, settings, caplog, log_static):
    settings.WHITENOISE_USE_FINDERS = True  # tests do not collect the static files
    settings.LMS_LOG_STATIC = log_static
    with caplog.at_level("INFO", logger="lms.access"):
        served = api.get(STATIC)
        assert api.get("/healthz").status_code == 200
    assert served.status_code == 200 and served["Content-Type"].startswith("text/css")
    assert access_paths(caplog) == ([STATIC, "/healthz"] if log_static else ["/healthz"])


@pytest.mark.processes
def test_static_files_are_logged_by_default(tmp_path):
    """Production logs what it serves (a proxy in front may leave static files to it)."""
    env = base_env(LMS_VAR_DIR=str(tmp_path))
    env.pop("LMS_LOG_STATIC", None)
    out = run_django("from django.conf import settings; print(settings.LMS_LOG_STATIC)", env)
    assert out.strip() == "True"


@pytest.mark.processes
def test_a_failing_readiness_probe_is_one_warning_line(tmp_path):
    """A process whose database is a closed port: each probe answers 503 and writes one
    WARNING line that says why, and no traceback."""
    script = (
        "from django.test import Client\n"
        "c = Client(raise_request_exception=False)\n"
        "print([c.get('/readyz').status_code for _ in range(3)])\n"
    )
    env = base_env(
        DATABASE_URL="postgres://postgres@127.0.0.1:1/unreachable",
        LMS_VAR_DIR=str(tmp_path),
        LMS_LOG_LEVEL="INFO",
    )
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()\n" + script],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[503, 503, 503]"
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert len(lines) == len(done.stderr.splitlines()), done.stderr  # nothing but JSON lines
    loud = [line for line in lines if line["level"] != "INFO"]
    assert [line["level"] for line in loud] == ["WARNING"] * 3, loud
    assert all(line["message"].startswith("readiness check failed: ") for line in loud)
    assert "127.0.0.1" in loud[0]["message"] or "connect" in loud[0]["message"].lower()
    assert not any("traceback" in line for line in lines)
    assert "Traceback" not in done.stderr


@pytest.mark.processes
def test_gunicorns_start_line_names_its_address(tmp_path):
    env = base_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        LMS_VAR_DIR=str(tmp_path),
        LMS_LOG_LEVEL="INFO",
    )
    with gunicorn_server(
        env, log_path=tmp_path / "gunicorn.log", workers=2, ready_path="/healthz"
    ) as server:
        text = server.log_path.read_text()
    started = [line for line in text.splitlines() if "Listening at" in line]
    assert len(started) == 1, text
    assert re.search(rf"Listening at: http://127\.0\.0\.1:{server.port} \(\d+\)", started[0])


@pytest.mark.processes
def test_make_serve_logs_requests_but_not_static_files(tmp_path):
    """`make serve` as a developer runs it: the start line names the address; a page's static
    file leaves no access line, an API request does."""
    port = free_port()
    env = base_env(
        LMS_VAR_DIR=str(tmp_path),
        LMS_BIND=f"{HOST}:{port}",
        LMS_LOG_LEVEL="INFO",
        LMS_WORKERS="1",
    )
    env.pop("LMS_LOG_STATIC", None)
    log_path = tmp_path / "serve.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            ["make", "--no-print-directory", "serve"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def answering() -> bool:
        assert proc.poll() is None, log_path.read_text()[-3000:]
        with contextlib.suppress(OSError):
            return get(port, "/healthz", timeout=2)[0] == 200
        return False

    try:
        wait_for(answering, 180, "make serve to answer", every=0.2)
        status, headers, _ = get(port, STATIC)
        assert status == 200 and headers["content-type"].startswith("text/css")
        assert get(port, "/api/bundles")[0] == 401
        time.sleep(0.5)
        text = log_path.read_text()
    finally:
        stop(proc, timeout=20)
    assert re.search(rf"Listening at: http://127\.0\.0\.1:{port} \(\d+\)", text), text[-3000:]
    assert '"path":"/api/bundles"' in text, text[-3000:]
    assert "/static/" not in text, text[-3000:]
