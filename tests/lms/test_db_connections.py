"""Connections the database cut between requests cost at most one 503 each, then the server
answers again: with persistent connections (the default) and with the psycopg pool, over
real HTTP to a production gunicorn."""

from __future__ import annotations

import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from harness.servers import base_env, fetch, gunicorn_servers

THREADS = 4
# The server's connections name themselves (libpq's PGAPPNAME), each test's server its own
# name: two of these tests may run at once (one per xdist worker), and one must never cut the
# other's connections.
APP = "lms-cut-connections"


def _cut_the_servers_connections(app: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = %s",
            [app],
        )
        return cursor.fetchone()[0]


@pytest.mark.postgres
@pytest.mark.processes
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "pool, checks, most_503s",
    [
        ("false", "false", THREADS),  # the default: each thread's own connection, once
        ("false", "true", 0),  # a health check before each request's first query
        ("true", "false", 8),  # each connection the pool held (its max_size is 8)
    ],
    ids=["persistent", "persistent-checked", "pool"],
)
def test_cut_connections_cost_one_503_each_then_the_server_answers(
    tmp_path, owner, pool, checks, most_503s
):
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    url = f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    app = f"{APP}-{uuid.uuid4().hex[:8]}"
    env = base_env(
        DATABASE_URL=url,
        LMS_VAR_DIR=str(tmp_path),
        LMS_THREADS=str(THREADS),
        LMS_DB_POOL=pool,
        LMS_CONN_HEALTH_CHECKS=checks,
        PGAPPNAME=app,
    )
    headers = {"Authorization": f"Bearer {owner.token}"}

    def ask(base: str, count: int) -> list[int]:
        with ThreadPoolExecutor(THREADS) as threads:
            return list(
                threads.map(lambda _: fetch(base + "/api/bundles", headers)[0], range(count))
            )

    with gunicorn_servers(env, count=1, workers=1) as (base,):
        assert set(ask(base, 4 * THREADS)) == {200}  # every thread has used its connection
        assert _cut_the_servers_connections(app) >= 1
        # Which of the server's threads takes a request is its own choice: a thread that
        # took none of a batch still holds its cut connection, so batches go on (a few at
        # most) until one is all 200; over all of them, each connection cost one 503 at most.
        after = Counter(ask(base, 12 * THREADS))
        for _ in range(5):
            batch = Counter(ask(base, 4 * THREADS))
            after += batch
            if set(batch) == {200}:
                break
        assert set(after) <= {200, 503}, after  # never a 500
        assert after[503] <= most_503s, after
        assert set(batch) == {200}, after
