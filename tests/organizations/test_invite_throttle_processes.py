"""The invite-lookup throttle holds across server processes, over real HTTP.

Two gunicorn masters (two workers each) share one store. Requests alternate between them,
so each master sees only about half of them: per-process counts would let about twice the
limit through before a 429. The shared count answers 429 at exactly limit + 1, and a burst
of concurrent requests gets exactly ``limit`` through.
"""

from __future__ import annotations

import json
import os
import random
import socket
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

import pytest
from django.db import connection

from harness.servers import base_env, fetch, gunicorn_servers, run_django
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.processes

LIMIT = 6
EXPECTED = {"email": "grace.hopper@example.com", "firstName": "Grace", "lastName": "Hopper"}

SETUP = """
import json
from django.core.management import call_command
from organizations.models import Organization
from organizations.services import create_invite
call_command("migrate", verbosity=0)
call_command("createcachetable")
org = Organization.objects.create(name="Throttle Academy")
_, raw = create_invite(org=org, email="grace.hopper@example.com", first_name="Grace",
                       last_name="Hopper")
print(json.dumps({"token": raw}))
"""


def server_env(tmp_path, database_url: str, **extra: str) -> dict[str, str]:
    return base_env(
        DATABASE_URL=database_url,
        LMS_VAR_DIR=str(tmp_path),
        LMS_INVITE_LOOKUP_RATE=f"{LIMIT}/min",
        # One trusted proxy, so each test picks its own client address in X-Forwarded-For
        # and never shares counts with another run against the same Redis.
        LMS_NUM_PROXIES="1",
        LMS_THREADS="4",
        **extra,
    )


def sqlite_site(tmp_path, **extra: str) -> tuple[dict[str, str], str]:
    """A migrated file-based SQLite database with one pending invite, and its token."""
    env = server_env(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", **extra)
    token = json.loads(run_django(SETUP, env).strip().splitlines()[-1])["token"]
    return env, token


def random_address() -> str:
    return f"10.{random.randrange(256)}.{random.randrange(256)}.{random.randrange(1, 255)}"


def lookup(base: str, token: str, address: str):
    return fetch(f"{base}/api/organizations/invites/{token}", {"X-Forwarded-For": address})


def assert_throttle_is_shared(servers: list[str], token: str) -> None:
    address = random_address()
    statuses = []
    for n in range(2 * LIMIT):
        # Unknown tokens count as much as the real one.
        asked = token if n % 3 == 0 else f"inv_unknown{n}"
        status, body, headers = lookup(servers[n % 2], asked, address)
        statuses.append(status)
        if status == 429:
            break
        if asked == token:
            assert (status, body) == (200, EXPECTED)
        else:
            assert (status, body["error"]) == (404, "not_found")
    assert statuses.index(429) == LIMIT, statuses
    assert body["error"] == "throttled" and body["requestId"] == headers["X-Request-ID"]
    assert 1 <= int(headers["Retry-After"]) <= 60

    # The limit is per client address: another one is served by either server.
    other = random_address()
    assert lookup(servers[1], token, other)[:2] == (200, EXPECTED)

    # A concurrent burst from a fresh address across both servers: exactly LIMIT get through.
    burst = random_address()
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(
            pool.map(lambda n: lookup(servers[n % 2], token, burst)[0], range(3 * LIMIT))
        )
    assert results.count(200) == LIMIT, results
    assert results.count(429) == 2 * LIMIT, results


def test_throttle_is_shared_by_processes_on_the_database_store(tmp_path):
    env, token = sqlite_site(tmp_path)
    with gunicorn_servers(env) as servers:
        assert_throttle_is_shared(servers, token)


def _redis_url() -> str | None:
    url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15"
    parsed = urlparse(url)
    try:
        socket.create_connection((parsed.hostname, parsed.port), timeout=0.5).close()
    except OSError:
        return None
    return url


def test_throttle_is_shared_by_processes_on_redis(tmp_path):
    url = _redis_url()
    if url is None:
        pytest.skip("no Redis reachable (REDIS_URL, else 127.0.0.1:6379)")
    env, token = sqlite_site(tmp_path, REDIS_URL=url)
    with gunicorn_servers(env) as servers:
        assert_throttle_is_shared(servers, token)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_throttle_is_shared_by_processes_on_postgresql(tmp_path, org):
    """The servers use this test's own PostgreSQL database (committed data, the cache table
    the test runner created), so row locks are exercised by truly concurrent processes."""
    _, token = make_invite(org)
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    url = f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    with gunicorn_servers(server_env(tmp_path, url)) as servers:
        assert_throttle_is_shared(servers, token)
