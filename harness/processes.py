"""The one process harness: start ``gunicorn -c gunicorn.conf.py`` on a free loopback port,
wait until it answers, and always stop it (SIGTERM, then SIGKILL of its process group).

Used by the tests that cross process boundaries (tests/deployment, tests/organizations) and by the
load bench (bench/load.py), so that every server is started, awaited and stopped one way. It
lives outside both, so the bench does not import the tests.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def gunicorn_command() -> list[str]:
    """``gunicorn -c gunicorn.conf.py`` from this interpreter's environment."""
    return [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"]


def get(
    port: int, path: str, headers: dict[str, str] | None = None, timeout: float = 10
) -> tuple[int, dict[str, str], bytes]:
    """One GET over a new connection: (status, lower-cased headers, body)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def start(command: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen:
    """``command`` in the project's folder and a session of its own (so that its whole
    process group can be stopped), its output in ``log_path``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


@dataclass(frozen=True)
class Server:
    port: int
    proc: subprocess.Popen
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"


@contextlib.contextmanager
def gunicorn_server(
    env: dict[str, str],
    *,
    log_path: Path,
    workers: int | None = None,
    threads: int | None = None,
    ready_path: str = "/readyz",
    ready_headers: dict[str, str] | None = None,
    startup_timeout: float = 30,
) -> Iterator[Server]:
    """Starts the production server with ``env`` on a free port and yields it once
    ``ready_path`` answers 200. ``workers``/``threads`` set LMS_WORKERS/LMS_THREADS."""
    port = free_port()
    env = {**env, "LMS_BIND": f"{HOST}:{port}"}
    if workers is not None:
        env["LMS_WORKERS"] = str(workers)
    if threads is not None:
        env["LMS_THREADS"] = str(threads)
    proc = start(gunicorn_command(), env, log_path)
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"gunicorn exited with {proc.returncode}:\n{log_path.read_text()[-4000:]}"
                )
            with contextlib.suppress(OSError):
                if get(port, ready_path, ready_headers, timeout=2)[0] == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"gunicorn did not answer within {startup_timeout}s:\n"
                    f"{log_path.read_text()[-4000:]}"
                )
            time.sleep(0.1)
        yield Server(port, proc, log_path)
    finally:
        stop(proc)


def answers(port: int, path: str = "/readyz") -> bool:
    """Whether ``path`` answers 200 on ``port`` now (False while nothing listens)."""
    try:
        return get(port, path, timeout=2)[0] == 200
    except OSError:
        return False


@contextlib.contextmanager
def make_target(
    target: str, env: dict[str, str], *, port: int, log_path: Path, timeout: float = 120
) -> Iterator[subprocess.Popen]:
    """Runs ``make <target>`` (``run`` or ``serve``) as a developer does, in its own session,
    with this interpreter's environment as the venv (taken as installed, never built here),
    and yields the make process once ``/readyz`` answers on ``port`` (which ``env``'s
    LMS_BIND names). Afterwards every process it started is stopped."""
    recipe = ["make", "--no-print-directory", "-o", ".venv/.installed", target]
    make = start([*recipe, f"BIN={Path(sys.executable).parent}"], env, log_path)
    try:
        wait_for(lambda: answers(port) or make.poll() is not None, timeout, f"make {target}", 0.2)
        if make.poll() is not None:
            raise RuntimeError(f"make {target} exited:\n{log_path.read_text()[-4000:]}")
        yield make
    finally:
        stop(make, timeout=60)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(make.pid, signal.SIGKILL)  # whatever outlived make itself


def wait_for(
    predicate: Callable[[], object], timeout: float = 20, what: str = "", every: float = 0.05
) -> object:
    """``predicate()``'s first true value, asked every ``every`` seconds; AssertionError
    naming ``what`` if none comes within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what or predicate}")


def stop(proc: subprocess.Popen, timeout: float = 15) -> None:
    """SIGTERM to the server's process group, SIGKILL if it is still there after timeout."""
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
