"""Real gunicorn servers for tests that must cross process boundaries, over real HTTP."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import gunicorn.config

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 30.0
# No proxy from the environment may stand between the test and 127.0.0.1.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_GUNICORN_SETTINGS = {setting.name for setting in gunicorn.config.KNOWN_SETTINGS}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


def run_django(code: str, env: dict[str, str]) -> str:
    """Run ``code`` in a fresh Django process with ``env``; its stdout."""
    script = "import django; django.setup()\n" + code
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@contextmanager
def gunicorn_servers(env: dict[str, str], *, count: int = 2, workers: int = 2) -> Iterator[list]:
    """``count`` separate gunicorn masters with ``workers`` workers each (the production
    gunicorn.conf.py), all on ``env``; yields their base URLs once every one answers
    /readyz, and always terminates them."""
    with ExitStack() as stack:
        started: list = []
        procs: list[subprocess.Popen] = []
        stack.callback(_stop_all, procs)
        for _ in range(count):
            port = free_port()
            log = stack.enter_context(open(env["LMS_VAR_DIR"] + f"/gunicorn-{port}.log", "w+"))
            args = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"]
            if "control_socket_disable" in _GUNICORN_SETTINGS:
                args.append("--no-control-socket")  # else every master shares one socket path
            proc = subprocess.Popen(
                args,
                cwd=ROOT,
                env={**env, "LMS_BIND": f"127.0.0.1:{port}", "LMS_WORKERS": str(workers)},
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            procs.append(proc)
            started.append((f"http://127.0.0.1:{port}", proc, log))
        for base, proc, log in started:
            _wait_ready(base, proc, log)
        yield [base for base, _, _ in started]


def _stop_all(procs: list[subprocess.Popen]) -> None:
    # SIGINT is gunicorn's quick shutdown: nothing is in flight once a test is done.
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_ready(base: str, proc: subprocess.Popen, log) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            if fetch(base + "/readyz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    log.seek(0)
    raise AssertionError(f"gunicorn at {base} did not become ready:\n{log.read()[-3000:]}")


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict, dict]:
    """GET over a new connection: (status, JSON body, headers)."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with _opener.open(request, timeout=15) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)
