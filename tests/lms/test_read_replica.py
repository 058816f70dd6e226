"""A read replica, for real: a PostgreSQL primary and a streaming standby made from it with
``pg_basebackup -R``, both under this test's own temporary directory on ports of their own,
and the production server (two gunicorn workers) with ``DATABASE_URL`` on the primary and
``LMS_DATABASE_REPLICA_URL`` on the standby, over HTTP with real tokens.

Which database answered is shown two ways: by the data (with the standby's replay paused, a
row written since exists on the primary only), and by ``X-Database-Standby``, the answer of
``pg_is_in_recovery()`` on the connection the request read from (``LMS_REPLICA_DEBUG_HEADER``,
off in production).

Skipped where PostgreSQL's server programs are missing, unless LMS_REQUIRE_REPLICA=true
(.ci/run sets it): then it fails.
"""

from __future__ import annotations

import contextlib
import glob
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.processes import HOST, free_port, gunicorn_server
from harness.servers import base_env, run_django

pytestmark = pytest.mark.processes

PIN_SECONDS = 9
MAX_LAG_SECONDS = 8
CHECK_SECONDS = 0.5

SETUP = """
import json
from django.core.management import call_command
from organizations.models import Organization
from organizations.services import add_member, create_api_token
call_command("migrate", verbosity=0)
call_command("createcachetable")
org = Organization.objects.create(name="Replica Academy")
tokens = {}
for name, role in (("writer", "owner"), ("reader", "admin"), ("other", "admin")):
    member = add_member(org=org, email=f"{name}@example.com", role=role)
    tokens[name] = create_api_token(membership=member)[1]
print(json.dumps(tokens))
"""

AUTOMATION = {
    "name": "Welcome",
    "trigger": "enrollment.created",
    "actions": [{"type": "webhook", "input": {"url": "https://hr.example.com/hook"}}],
}


def redis_url() -> str | None:
    """A Redis database of its own for this test's pins, when Redis is on 127.0.0.1:6379."""
    with contextlib.suppress(OSError), socket.create_connection((HOST, 6379), timeout=1):
        return "redis://127.0.0.1:6379/13"
    return None


def _unavailable(reason: str) -> None:
    if os.environ.get("LMS_REQUIRE_REPLICA", "").lower() in {"1", "true", "yes"}:
        pytest.fail(f"the read replica test is required but {reason}", pytrace=False)
    pytest.skip(reason)


def _server_bin() -> Path:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_basebackup"),
        key=lambda path: int(Path(path).parts[-3]),
    )
    if not found:
        _unavailable("PostgreSQL's server programs are not in /usr/lib/postgresql/*/bin")
    return Path(found[-1]).parent


class Clusters:
    """A primary and its standby, run as the ``postgres`` user when this is root (the
    server refuses to run as root)."""

    def __init__(self, root: Path, bin_dir: Path) -> None:
        self.root, self.bin = root, bin_dir
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.primary_port, self.standby_port = free_port(), free_port()

    def run(self, program: str, *args: str) -> None:
        done = subprocess.run(
            [*self.as_postgres, str(self.bin / program), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, f"{program}: {done.stdout[-2000:]}{done.stderr[-2000:]}"

    def ctl(self, name: str, action: str) -> None:
        self.run("pg_ctl", "-D", str(self.root / name), "-l", str(self.root / f"{name}.log"),
                 "-w", "-t", "30", "-m", "fast", action)  # fmt: skip

    def start(self) -> None:
        primary = self.root / "primary"
        self.run("initdb", "-D", str(primary), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                 "--no-sync")  # fmt: skip
        settings = {
            "listen_addresses": f"'{HOST}'",
            "port": self.primary_port,
            "unix_socket_directories": f"'{self.root}'",
            "wal_level": "replica",
            "max_wal_senders": 4,
            "hot_standby": "on",
            "fsync": "off",
            "shared_buffers": "'32MB'",
        }
        with open(primary / "postgresql.conf", "a") as conf:
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())
        with open(primary / "pg_hba.conf", "a") as hba:
            hba.write(f"host replication postgres {HOST}/32 trust\n")
        self.ctl("primary", "start")
        self.run("pg_basebackup", "-h", HOST, "-p", str(self.primary_port), "-U", "postgres",
                 "-D", str(self.root / "standby"), "-R", "-X", "stream", "--no-sync")  # fmt: skip
        with open(self.root / "standby" / "postgresql.conf", "a") as conf:
            conf.write(f"port = {self.standby_port}\n")
        self.ctl("standby", "start")

    def stop(self) -> None:
        for name in ("standby", "primary"):
            if (self.root / name / "postmaster.pid").exists():
                with contextlib.suppress(AssertionError, subprocess.TimeoutExpired):
                    self.ctl(name, "stop")

    def url(self, port: int) -> str:
        return f"postgres://postgres@{HOST}:{port}/lms"

    def sql(self, port: int, query: str, database: str = "lms"):
        import psycopg

        with psycopg.connect(
            host=HOST, port=port, user="postgres", dbname=database, autocommit=True
        ) as connection:
            cursor = connection.execute(query)
            return cursor.fetchone() if cursor.description else None

    def wait_replayed(self, timeout: float = 30) -> None:
        """Until the standby has replayed everything the primary wrote so far."""
        (lsn,) = self.sql(self.primary_port, "SELECT pg_current_wal_lsn()::text")
        deadline = time.monotonic() + timeout
        query = f"SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn"
        while not self.sql(self.standby_port, query)[0]:
            assert time.monotonic() < deadline, "the standby did not catch up"
            time.sleep(0.05)


@pytest.fixture
def clusters() -> Iterator[Clusters]:
    bin_dir = _server_bin()
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        _unavailable("runuser is missing (the server must not run as root)")
    # Not under pytest's own base, which only root may enter: the server runs as postgres.
    root = Path(tempfile.mkdtemp(prefix="lms-replica-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    found = Clusters(root, bin_dir)
    try:
        found.start()
        yield found
    finally:
        found.stop()
        shutil.rmtree(root, ignore_errors=True)


def call(port: int, method: str, path: str, token: str, body: dict | None = None):
    """One request over a new connection (so either worker may answer): (status, standby
    header, JSON body)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=15)
    try:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        conn.request(method, path, body=json.dumps(body) if body else None, headers=headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, response.getheader("X-Database-Standby"), json.loads(data or "null")
    finally:
        conn.close()


@pytest.mark.postgres
def test_reads_go_to_the_standby_writers_read_their_writes_and_a_lost_standby_is_skipped(
    clusters, tmp_path
):
    started = time.monotonic()
    clusters.sql(clusters.primary_port, "CREATE DATABASE lms", database="postgres")
    env = base_env(DATABASE_URL=clusters.url(clusters.primary_port), LMS_VAR_DIR=str(tmp_path))
    tokens = json.loads(run_django(SETUP, env).strip().splitlines()[-1])
    clusters.wait_replayed()
    env.update(
        LMS_DATABASE_REPLICA_URL=clusters.url(clusters.standby_port),
        LMS_REPLICA_PIN_SECONDS=str(PIN_SECONDS),
        LMS_REPLICA_MAX_LAG_SECONDS=str(MAX_LAG_SECONDS),
        LMS_REPLICA_CHECK_SECONDS=str(CHECK_SECONDS),
        LMS_REPLICA_DEBUG_HEADER="true",
        LMS_TOKEN_CACHE_SECONDS="0",
    )
    writer, reader, other = tokens["writer"], tokens["reader"], tokens["other"]
    with gunicorn_server(env, log_path=tmp_path / "gunicorn.log", workers=2) as server:
        port = server.port

        # Reads are answered by the standby, through the ORM and through a compiled read.
        status, standby, first = call(port, "POST", "/api/automations", writer, AUTOMATION)
        assert status == 201, first
        clusters.wait_replayed()
        for token in (reader, other):
            assert call(port, "GET", "/api/automations", token)[:2] == (200, "true")
            assert call(port, "GET", f"/api/automations/{first['id']}", token)[:2] == (200, "true")

        # With the standby's replay paused (and so far within the maximum lag), a write is on
        # the primary only: its writer reads it at once, from any worker; another caller,
        # read from the standby, does not see it yet.
        clusters.sql(clusters.primary_port, "CREATE TABLE replayed_just_now (id int)")
        clusters.wait_replayed()
        clusters.sql(clusters.standby_port, "SELECT pg_wal_replay_pause()")
        paused_at = time.monotonic()
        second = {**AUTOMATION, "name": "Welcome again"}
        status, _, second = call(port, "POST", "/api/automations", writer, second)
        assert status == 201, second
        for _ in range(4):
            assert call(port, "GET", f"/api/automations/{second['id']}", writer)[:2] == (
                200,
                "false",
            )
            status, standby, page = call(port, "GET", "/api/automations", writer)
            assert (status, standby, page["total"]) == (200, "false", 2)
        status, standby, _ = call(port, "GET", f"/api/automations/{second['id']}", reader)
        assert (status, standby) == (404, "true")
        status, standby, page = call(port, "GET", "/api/automations", reader)
        assert (status, standby, page["total"]) == (200, "true", 1)
        assert time.monotonic() - paused_at < MAX_LAG_SECONDS  # all of it within the lag

        # Once the standby is further behind than the maximum lag, everyone reads the primary.
        time.sleep(max(0.0, paused_at + MAX_LAG_SECONDS + 2 * CHECK_SECONDS - time.monotonic()))
        status, standby, _ = call(port, "GET", f"/api/automations/{second['id']}", other)
        assert (status, standby) == (200, "false")
        clusters.sql(clusters.standby_port, "SELECT pg_wal_replay_resume()")
        clusters.wait_replayed()
        time.sleep(2 * CHECK_SECONDS)
        assert call(port, "GET", f"/api/automations/{second['id']}", other)[:2] == (200, "true")

    # The standby stopped while requests come in: every one answered, by the primary. A
    # server whose last health check is long past (one worker, checks 30 s apart) sends the
    # reads to the standby until one fails there; that request is answered again from the
    # primary, and the ones after it read the primary. Its pins are in Redis where there
    # is one (the first server's were in the database cache table).
    env.update(LMS_REPLICA_CHECK_SECONDS="30", LMS_REPLICA_PIN_SECONDS="40")
    if redis_url():
        env["REDIS_URL"] = redis_url()
    with gunicorn_server(env, log_path=tmp_path / "gunicorn-2.log", workers=1) as server:
        port = server.port
        assert call(port, "GET", "/api/automations", other)[:2] == (200, "true")
        status, _, renamed = call(
            port, "PATCH", f"/api/automations/{first['id']}", writer, {"name": "Renamed"}
        )
        assert status == 200, renamed
        status, standby, read = call(port, "GET", f"/api/automations/{first['id']}", writer)
        assert (status, standby, read["name"]) == (200, "false", "Renamed")
        assert call(port, "GET", f"/api/automations/{first['id']}", reader)[:2] == (200, "true")
        answers: list[tuple] = []
        done = threading.Event()

        def keep_reading() -> None:
            while not done.is_set():
                answers.append(call(port, "GET", "/api/automations", other))

        reading = threading.Thread(target=keep_reading)
        reading.start()
        try:
            time.sleep(0.3)
            clusters.ctl("standby", "stop")
            stopped_at = len(answers)
            time.sleep(1.0)
        finally:
            done.set()
            reading.join()
        assert stopped_at > 0 and len(answers) > stopped_at + 2
        assert {answer[0] for answer in answers} == {200}, [a for a in answers if a[0] != 200]
        assert {answer[2]["total"] for answer in answers} == {2}
        assert answers[0][1] == "true"
        # (the one request under way while it stopped may have read it before)
        assert {answer[1] for answer in answers[stopped_at + 1 :]} == {"false"}
        assert call(port, "GET", f"/api/automations/{first['id']}", reader)[:2] == (200, "false")
        log = (tmp_path / "gunicorn-2.log").read_text()
        assert "a read failed on the replica; answered again from the primary" in log
    assert time.monotonic() - started < 90


@pytest.mark.parametrize(
    ("database", "extra", "refusal"),
    [
        ("sqlite:///x.sqlite3", {}, "needs PostgreSQL for both databases"),
        ("postgres://u@127.0.0.1/lms", {"LMS_REPLICA_MAX_LAG_SECONDS": "5"}, "must not exceed"),
    ],
)
def test_a_replica_is_refused_where_reads_could_not_be_kept_right(database, extra, refusal):
    """A replica beside SQLite, or a maximum lag (plus the check's interval) longer than the
    pin, is a configuration error at start-up: a caller could miss their own write."""
    env = base_env(
        DATABASE_URL=database, LMS_DATABASE_REPLICA_URL="postgres://u@127.0.0.1:5433/lms", **extra
    )
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=Path(__file__).resolve().parents[2], env=env, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode != 0 and refusal in done.stderr, done.stderr[-2000:]
