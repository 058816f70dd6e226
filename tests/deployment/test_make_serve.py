"""`make serve` as a developer runs it: gunicorn with the automations' task worker and the
sweep beside it. A worker that exits is started again (deploy/keep-running), and Ctrl-C (a
SIGINT to the terminal's whole process group) stops every process it started."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from harness.processes import answers, free_port, make_target, wait_for
from tests.deployment.processes import developer_env

pytestmark = pytest.mark.processes


def _session(sid: int) -> dict[int, list[str]]:
    """The live processes of a session: pid to arguments."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) != sid:
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue  # exited, waiting to be reaped
            found[int(entry.name)] = (entry / "cmdline").read_bytes().decode().split("\0")
        except (OSError, ProcessLookupError):
            continue
    return found


def _managing(sid: int, command: str) -> set[int]:
    """The Python processes of the session running ``manage.py <command>``."""
    return {
        pid
        for pid, args in _session(sid).items()
        if "python" in Path(args[0]).name and args[1:3] == ["manage.py", command]
    }


def test_make_serve_restarts_an_exited_worker_and_ctrl_c_stops_everything(tmp_path):
    port = free_port()
    env = developer_env(tmp_path, port, KEEP_RUNNING_DELAY="0.5")
    with make_target("serve", env, port=port, log_path=tmp_path / "make.log") as make:
        (worker,) = wait_for(
            lambda: _managing(make.pid, "db_worker"), 30, "the task worker", every=0.2
        )
        assert len(_managing(make.pid, "sweep_automation_runs")) == 1
        os.kill(worker, signal.SIGKILL)
        (again,) = wait_for(
            lambda: _managing(make.pid, "db_worker") - {worker},
            30,
            "the worker's restart",
            every=0.2,
        )
        assert again != worker and answers(port)
        os.killpg(make.pid, signal.SIGINT)  # Ctrl-C
        try:
            # gunicorn gives its workers up to its graceful timeout (30 s) to stop: on a
            # loaded machine a worker can take most of it.
            make.wait(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running after Ctrl-C: {_session(make.pid)}") from None
        left = wait_for(
            lambda: not _session(make.pid) or None, 30, "every process to stop", every=0.2
        )
        assert left
    output = (tmp_path / "make.log").read_text()
    assert "starting it again" in output, output[-3000:]
