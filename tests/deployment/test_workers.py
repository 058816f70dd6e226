"""The production server spreads keep-alive connections across its workers: each worker
listens on a socket of its own (``reuse_port`` in gunicorn.conf.py), so one worker cannot
take every connection while another idles (docs/performance.md, sixth round)."""

from __future__ import annotations

import http.client
import os
import subprocess
import time
from pathlib import Path

import pytest

from harness.processes import gunicorn_command
from tests.deployment.processes import ROOT, gunicorn_server, manage, production_env

pytestmark = [
    pytest.mark.skipif(
        not Path("/proc/net/tcp").exists(), reason="reads the connections from Linux's /proc"
    ),
    pytest.mark.processes,
]

CONNECTIONS = 16
HEADERS = {"Host": "lms.example.com"}


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # exited meanwhile
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _sockets(port: int, state: str) -> set[str]:
    """The inodes of the sockets in ``state`` (/proc/net/tcp's hex code) bound to ``port``."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == state and int(fields[1].rsplit(":", 1)[1], 16) == port:
            inodes.add(fields[9])
    return inodes


def listeners(port: int) -> int:
    return len(_sockets(port, "0A"))


def connections_per_worker(workers: list[int], port: int) -> dict[int, int]:
    """How many established connections to ``port`` each worker holds."""
    inodes = _sockets(port, "01")
    held = {}
    for pid in workers:
        held[pid] = 0
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:[") and target[len("socket:[") : -1] in inodes:
                held[pid] += 1
    return held


@pytest.mark.parametrize("reuse_port", ["true", "false"])
def test_keep_alive_connections_are_spread_across_the_workers(tmp_path, reuse_port):
    env = production_env(tmp_path, LMS_WORKERS="2", LMS_THREADS="2", LMS_REUSE_PORT=reuse_port)
    result = manage("migrate", "--noinput", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    with gunicorn_server(
        env, log_path=tmp_path / "gunicorn.log", ready_path="/healthz", ready_headers=HEADERS
    ) as server:
        # The first worker may answer before the second listens.
        listening = 2 if reuse_port == "true" else 1
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (
            len(children(server.proc.pid)) < 2 or listeners(server.port) < listening
        ):
            time.sleep(0.1)
        workers = children(server.proc.pid)
        assert (len(workers), listeners(server.port)) == (2, listening)
        clients = [http.client.HTTPConnection("127.0.0.1", server.port) for _ in range(CONNECTIONS)]
        try:
            for client in clients:  # each opened, answered and kept open
                client.request("GET", "/healthz", headers=HEADERS)
                response = client.getresponse()
                assert response.status == 200
                response.read()
            held = connections_per_worker(workers, server.port)
        finally:
            for client in clients:
                client.close()
    assert sum(held.values()) == CONNECTIONS
    if reuse_port == "true":
        # The kernel hashes each connection to one of the two sockets: all 16 on one is a
        # chance of 2 in 65,536.
        assert min(held.values()) >= 1, held


def test_a_second_server_on_the_same_address_stops_instead_of_sharing_it(tmp_path):
    """Sockets with SO_REUSEPORT share a port with any other such socket of the same user: a
    second server would quietly take part of the first one's connections. It refuses."""
    env = production_env(tmp_path, LMS_WORKERS="1", LMS_THREADS="1")
    result = manage("migrate", "--noinput", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    with gunicorn_server(
        env, log_path=tmp_path / "first.log", ready_path="/healthz", ready_headers=HEADERS
    ) as first:
        second = subprocess.run(
            gunicorn_command(),
            cwd=ROOT,
            env={**env, "LMS_BIND": f"127.0.0.1:{first.port}"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode != 0
        assert f"Cannot listen at 127.0.0.1:{first.port}" in second.stderr
        assert "Address already in use" in second.stderr
        assert first.proc.poll() is None  # the first one serves on
