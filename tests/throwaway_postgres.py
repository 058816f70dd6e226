"""A PostgreSQL server of a test's own, to stop and start under running processes: a cluster
made by ``initdb`` in a temporary directory, listening on a free loopback port. The shared
server on 5432 is never touched.

The binaries come from /usr/lib/postgresql/<version>/bin (Debian's layout) or PATH. Without
them the test is skipped, saying so, unless LMS_REQUIRE_PG_CLUSTER=true (CI), which makes
it fail. PostgreSQL refuses to run as root: as root the cluster belongs to, and runs as,
the ``postgres`` user.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.processes import free_port


def _bin_dir() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3].split(".")[0]),
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


class ThrowawayPostgres:
    def __init__(self, bin_dir: Path, base: Path, user: pwd.struct_passwd | None) -> None:
        self.bin_dir, self.base, self.user = bin_dir, base, user
        self.data = base / "data"
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}"

    def _run(self, *args: str, timeout: float = 60) -> None:
        as_user = (
            {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
            if self.user
            else {}
        )
        done = subprocess.run(
            [str(self.bin_dir / args[0]), *args[1:]],
            cwd=self.base,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C", "LANG": "C"},
            **as_user,
        )
        assert done.returncode == 0, f"{args[0]} failed: {done.stdout}{done.stderr}"

    def init(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--no-sync")  # fmt: skip

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.base}"
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.base / "log"),
                  "-w", "-t", "60", "start")  # fmt: skip

    def stop(self) -> None:
        """A fast shutdown: every session is cut, as when the server goes away."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.base, ignore_errors=True)


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[ThrowawayPostgres]:
    """A started server of the test's own; always stopped and removed afterwards."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        reason = "initdb and pg_ctl are not installed (PostgreSQL's server package)"
        if os.environ.get("LMS_REQUIRE_PG_CLUSTER", "").lower() == "true":
            pytest.fail(f"{reason} and LMS_REQUIRE_PG_CLUSTER=true")
        pytest.skip(f"{reason}; LMS_REQUIRE_PG_CLUSTER=true to fail instead")
    user = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
    base = Path(tempfile.mkdtemp(prefix="lms-pg-"))
    if user:
        os.chown(base, user.pw_uid, user.pw_gid)
    server = ThrowawayPostgres(bin_dir, base, user)
    try:
        server.init()
        server.start()
        yield server
    finally:
        server.close()
