"""One stream parses whole: gunicorn's own lines and the restart wrapper's
(deploy/keep-running) are JSON objects, one a line, like the application's."""

from __future__ import annotations

import json
import subprocess

import pytest

from harness.processes import ROOT, get, gunicorn_server
from tests.deployment.processes import clean_env

pytestmark = pytest.mark.processes


def test_every_line_gunicorn_writes_is_json(tmp_path):
    env = clean_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        LMS_VAR_DIR=str(tmp_path),
        LMS_STATIC_ROOT=str(tmp_path / "static"),
    )
    log = tmp_path / "gunicorn.log"
    with gunicorn_server(env, log_path=log, workers=1) as server:
        assert get(server.port, "/healthz")[0] == 200
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    loggers = {line["logger"] for line in lines}
    assert {"gunicorn.error", "lms.access"} <= loggers, loggers
    started = [line for line in lines if line["message"].startswith("Listening at:")]
    assert started and started[0]["level"] == "INFO"
    assert all({"time", "level", "message"} <= set(line) for line in lines)


def test_the_restart_wrappers_lines_are_json(tmp_path):
    command = 'printf %s "quote \\" and backslash \\\\"; exit 3'
    done = subprocess.run(
        ["timeout", "1", "sh", "deploy/keep-running", "sh", "-c", command],
        cwd=ROOT,
        env={**clean_env(), "KEEP_RUNNING_DELAY": "0.3"},
        capture_output=True,
        text=True,
    )
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    assert lines, done.stderr
    first = lines[0]
    assert (first["level"], first["logger"]) == ("WARNING", "keep-running")
    assert first["message"] == (
        f"keep-running: sh -c {command} exited with status 3; starting it again in 0.3 s"
    )
