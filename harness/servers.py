"""Real gunicorn servers for tests and benches that must cross process boundaries, over real
HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from harness.processes import ROOT, gunicorn_server

READY_TIMEOUT = 30.0
# No proxy from the environment may stand between the test and 127.0.0.1.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def base_env(**overrides: str) -> dict[str, str]:
    """The test process's environment without the knobs a test must choose itself."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "LMS_INVITE_LOOKUP_RATE", "LMS_NUM_PROXIES"}
    }
    env.update({"LMS_LOG_LEVEL": "WARNING", "DJANGO_SETTINGS_MODULE": "lms.settings"})
    env.update(overrides)
    return env


def run_django(code: str, env: dict[str, str], *, timeout: float = 120) -> str:
    """Run ``code`` in a fresh Django process with ``env``; its stdout."""
    script = "import django; django.setup()\n" + code
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@contextmanager
def gunicorn_servers(env: dict[str, str], *, count: int = 2, workers: int = 2) -> Iterator[list]:
    """``count`` separate gunicorn masters with ``workers`` workers each (the production
    gunicorn.conf.py), all on ``env``; yields their base URLs once every one answers
    /readyz, and always stops them."""
    with ExitStack() as stack:
        servers = [
            stack.enter_context(
                gunicorn_server(
                    env,
                    log_path=Path(env["LMS_VAR_DIR"]) / f"gunicorn-{index}.log",
                    workers=workers,
                    startup_timeout=READY_TIMEOUT,
                )
            )
            for index in range(count)
        ]
        yield [server.url for server in servers]


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict, dict]:
    """GET over a new connection: (status, JSON body, headers)."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with _opener.open(request, timeout=15) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)
