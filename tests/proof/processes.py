"""Running the service as a real process, the way production does, for the proof tests.

Every helper here keeps the child's environment explicit (no LMS_* or DATABASE_URL leaks in
from the developer's shell) and always stops what it started.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def clean_env(**overrides: str) -> dict[str, str]:
    """The current environment without our knobs, plus ``overrides``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("LMS_")
        and key not in {"DATABASE_URL", "REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    env["DJANGO_SETTINGS_MODULE"] = "lms.settings"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(overrides)
    return env


def production_env(var_dir: Path, **overrides: str) -> dict[str, str]:
    """The README's production variables, with every file the process writes under var_dir."""
    return clean_env(
        LMS_HTTPS="true",
        LMS_SECRET_KEY=secrets.token_urlsafe(50),
        LMS_ALLOWED_HOSTS="lms.example.com",
        LMS_VAR_DIR=str(var_dir),
        LMS_STATIC_ROOT=str(var_dir / "static"),
        DATABASE_URL=f"sqlite:///{var_dir / 'db.sqlite3'}",
        **overrides,
    )


def manage(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def gunicorn_command() -> list[str]:
    """``gunicorn -c gunicorn.conf.py`` from this interpreter's environment."""
    script = BIN / "gunicorn"
    if script.exists():
        return [str(script), "-c", "gunicorn.conf.py"]
    return [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"]


def get(
    port: int, path: str, headers: dict[str, str] | None = None, timeout: float = 10
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


@contextlib.contextmanager
def gunicorn_server(
    env: dict[str, str],
    *,
    log_path: Path,
    ready_path: str = "/healthz",
    ready_headers: dict[str, str] | None = None,
    startup_timeout: float = 30,
) -> Iterator[int]:
    """Starts the production server on a free loopback port and yields the port.

    The server is stopped (SIGTERM, then SIGKILL of its process group) whatever happens.
    """
    port = free_port()
    env = {**env, "LMS_BIND": f"127.0.0.1:{port}"}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            gunicorn_command(),
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"gunicorn exited with {proc.returncode}:\n{log_path.read_text()[-4000:]}"
                )
            try:
                status, _, _ = get(port, ready_path, ready_headers, timeout=2)
                if status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"gunicorn did not answer within {startup_timeout}s:\n"
                    f"{log_path.read_text()[-4000:]}"
                )
            time.sleep(0.1)
        yield port
    finally:
        stop(proc)


def stop(proc: subprocess.Popen, timeout: float = 15) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)
