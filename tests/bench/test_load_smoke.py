"""The load bench runs: ``bench/load.py`` for about a second per operation, ours and the
textbook, every request answered as planned (no connection error, timeout or unexpected
status). On PostgreSQL only (the bench's database), and with Debian's ``wrk``: CI installs
it and sets LMS_REQUIRE_WRK, so there it runs or fails; elsewhere it skips without it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

pytestmark = [pytest.mark.postgres, pytest.mark.processes]

ROOT = Path(__file__).resolve().parents[2]


def _required() -> bool:
    return os.environ.get("LMS_REQUIRE_WRK", "").lower() in {"1", "true", "yes"}


@pytest.fixture
def wrk() -> str:
    found = shutil.which("wrk")
    if found is None:
        if _required():
            pytest.fail("wrk is missing and LMS_REQUIRE_WRK is set: apt-get install wrk")
        pytest.skip("needs wrk (apt-get install wrk); CI installs it and sets LMS_REQUIRE_WRK")
    return found


@pytest.fixture
def bench_database() -> str:
    """A database of the smoke run's own, beside the tests' (dropped before and after)."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    name = f"{parts.path.lstrip('/')}_load_smoke"
    server = urlunsplit(parts._replace(path="/postgres"))

    def drop() -> None:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )

    drop()
    yield urlunsplit(parts._replace(path=f"/{name}"))
    drop()


def test_every_operation_runs_under_load_without_an_error(wrk, bench_database, tmp_path):
    out = tmp_path / "load.json"
    done = subprocess.run(
        [sys.executable, "bench/load.py", "--duration", "1", "--rounds", "1",
         "--connections", "2", "--workers", "1", "--threads", "1", "--log-level", "warning",
         "--database-url", bench_database, "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    rows = json.loads(out.read_text())["rows"]
    keys = {row["key"] for row in rows}
    assert {
        "relink",
        "cycle",
        "progress",
        "learners",
        "bundles",
        "ceiling",
        "floor",
        "write",
    } <= keys
    failing = {
        row["key"]: (row["errors"], row["textbook_errors"])
        for row in rows
        if row["errors"] or row["textbook_errors"]
    }
    assert failing == {}, done.stderr[-4000:]
    assert all(row["rps"] > 0 for row in rows)
