"""The invite-lookup throttle in one process: what counts, per which address, the sliding
window, the stores' atomicity. (Across server processes: test_invite_throttle_processes.)"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
import uuid
from urllib.parse import urlparse

import pytest
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from organizations.models import ThrottleWindow
from organizations.throttling import (
    DatabaseWindowStore,
    RedisWindowStore,
    parse_rate,
    throttle_key,
)
from tests.helpers import assert_error, prepared_statements
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.django_db


def invite_url(token: str) -> str:
    return f"/api/organizations/invites/{token}"


@pytest.fixture
def rate(settings):
    """Sets the invite lookup rate (and optionally the trusted proxies) for one test."""

    def set_rate(value: str, *, num_proxies: int | None = None) -> None:
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {"invite_lookup": value},
            "NUM_PROXIES": num_proxies,
        }

    return set_rate


def get_from(api, token: str, address: str = "127.0.0.1", **headers):
    return api.client.get(invite_url(token), REMOTE_ADDR=address, headers=headers)


def test_unknown_unavailable_and_pending_lookups_all_count(api, org, rate):
    rate("3/min")
    _, pending = make_invite(org)
    _, revoked = make_invite(org, "revoked", email="r@example.com")
    assert get_from(api, "inv_unknown").status_code == 404
    assert get_from(api, revoked).status_code == 410
    assert get_from(api, pending).status_code == 200
    response = get_from(api, pending)
    body = assert_error(response, 429, "throttled")
    assert 59 <= int(response["Retry-After"]) <= 60
    assert body["message"] == f"Too many requests; retry in {response['Retry-After']} seconds."


def test_a_throttled_lookup_does_not_reach_the_invites(api, org, rate, django_assert_num_queries):
    rate("1/min")
    _, pending = make_invite(org)
    get_from(api, pending)
    # No invite query: the refused upsert, then the hits read for Retry-After.
    with django_assert_num_queries(2):
        assert get_from(api, pending).status_code == 429


def test_the_limit_is_per_client_address(api, org, rate):
    rate("2/min")
    _, pending = make_invite(org)
    for _ in range(2):
        assert get_from(api, pending, "198.51.100.7").status_code == 200
    assert get_from(api, pending, "198.51.100.7").status_code == 429
    assert get_from(api, pending, "198.51.100.8").status_code == 200


def test_a_forged_forwarded_for_does_not_escape_without_trusted_proxies(api, org, rate):
    rate("2/min")
    _, pending = make_invite(org)
    statuses = [
        get_from(api, pending, "198.51.100.7", x_forwarded_for=f"203.0.113.{n}").status_code
        for n in range(3)
    ]
    assert statuses == [200, 200, 429]


def test_behind_a_trusted_proxy_the_forwarded_address_counts(api, org, rate):
    rate("1/min", num_proxies=1)
    _, pending = make_invite(org)
    proxy = "10.0.0.1"
    assert get_from(api, pending, proxy, x_forwarded_for="1.1.1.1, 203.0.113.5").status_code == 200
    # The client cannot choose the hop the proxy appended.
    forged = get_from(api, pending, proxy, x_forwarded_for="9.9.9.9, 203.0.113.5")
    assert forged.status_code == 429
    assert get_from(api, pending, proxy, x_forwarded_for="203.0.113.6").status_code == 200


def test_an_ipv6_client_counts_by_its_64_block(api, org, rate):
    rate("2/min")
    _, pending = make_invite(org)
    assert get_from(api, pending, "2001:db8:1:2::1").status_code == 200
    assert get_from(api, pending, "2001:db8:1:2:ffff::9").status_code == 200
    assert get_from(api, pending, "2001:db8:1:2::abcd").status_code == 429
    assert get_from(api, pending, "2001:db8:1:3::1").status_code == 200


def test_the_store_keeps_no_client_address_in_the_clear(api, org, rate):
    rate("5/min")
    get_from(api, "inv_x", "198.51.100.77")
    keys = list(ThrottleWindow.objects.values_list("key", flat=True))
    assert keys == [throttle_key("invite_lookup", "198.51.100.77")]
    assert "198.51.100.77" not in keys[0] and len(keys[0]) <= 64


@pytest.mark.parametrize(
    "value, parsed",
    [
        ("60/min", (60, 60)),
        ("60/m", (60, 60)),
        ("5/s", (5, 1)),
        ("5/10s", (5, 10)),
        ("100/hour", (100, 3600)),
        ("1000/day", (1000, 86400)),
        (" 7 / 2 min ", (7, 120)),
    ],
)
def test_parse_rate(value, parsed):
    assert parse_rate(value) == parsed


@pytest.mark.parametrize("value", ["", "60", "0/min", "60/0s", "60/week", "-1/min", "x/min"])
def test_parse_rate_refuses_nonsense(value):
    with pytest.raises(ImproperlyConfigured):
        parse_rate(value)


class FakeClock:
    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_window_slides_it_is_any_60_seconds_not_a_calendar_minute():
    clock = FakeClock()
    store = DatabaseWindowStore(clock=clock)
    t0 = clock.now

    def hit_at(offset: float):
        clock.now = t0 + offset
        return store.hit("k", limit=3, window=60)

    assert [hit_at(0), hit_at(30), hit_at(59)] == [None, None, None]
    assert hit_at(59.5) == pytest.approx(0.5)  # the hit at 0 leaves the window at 60
    assert hit_at(60) is None
    assert hit_at(61) == pytest.approx(29)  # hits at 30, 59, 60: 30 leaves at 90
    # A fixed window starting at 60 would allow these; the sliding one does not.
    assert hit_at(89.9) == pytest.approx(0.1)
    assert hit_at(90.1) is None


def test_hits_from_clocks_out_of_step_still_slide():
    """Servers' clocks differ by a little: a hit may carry an earlier time than the last
    one stored. It still counts while in the window, and leaves it at its own time."""
    clock = FakeClock()
    store = DatabaseWindowStore(clock=clock)
    t0 = clock.now
    for offset in (10, 0, 5):  # written out of order
        clock.now = t0 + offset
        assert store.hit("k", limit=3, window=60) is None
    clock.now = t0 + 20
    assert store.hit("k", limit=3, window=60) == pytest.approx(40)  # the hit at 0 leaves at 60
    clock.now = t0 + 60.5
    assert store.hit("k", limit=3, window=60) is None
    assert store.hit("k", limit=3, window=60) == pytest.approx(4.5)  # then the one at 5


def test_no_row_is_purged_while_a_hit_is_in_its_window():
    clock = FakeClock()
    store = DatabaseWindowStore(clock=clock)
    t0 = clock.now
    for offset in (0, 59):
        clock.now = t0 + offset
        assert store.hit("a", limit=2, window=60) is None
    clock.now = t0 + 118
    assert store.hit("b", limit=2, window=60) is None  # starts its window: purges stale rows
    assert store.hit("a", limit=1, window=60) == pytest.approx(1)  # the hit at 59 still counts


@pytest.mark.postgres
def test_most_hits_leave_the_indexes_alone():
    """A hit changes no indexed column unless the row's expiry has to move, so PostgreSQL
    updates it in place (HOT): no index entry per request, no dead version left to vacuum."""

    def updates() -> tuple[int, int]:
        # This transaction's own counts (with any not yet reported of earlier ones).
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = %s",
                [ThrottleWindow._meta.db_table],
            )
            return cursor.fetchone()

    store = DatabaseWindowStore()
    assert store.hit("hot", limit=100, window=60) is None  # the insert
    before = updates()
    for _ in range(20):
        assert store.hit("hot", limit=100, window=60) is None
    after = updates()
    assert after[0] - before[0] == 20
    assert after[1] - before[1] >= 19  # at most the expiry's move is not in place


def test_refused_requests_do_not_count():
    clock = FakeClock()
    store = DatabaseWindowStore(clock=clock)
    start = clock.now
    assert store.hit("k", limit=1, window=10) is None
    for step in range(1, 10):
        clock.now = start + step
        assert store.hit("k", limit=1, window=10) is not None
    clock.now = start + 10
    assert store.hit("k", limit=1, window=10) is None


def test_a_key_starting_a_window_purges_other_stale_windows_only():
    clock = FakeClock()
    store = DatabaseWindowStore(clock=clock)
    store.hit("stale", limit=5, window=10)
    store.hit("live", limit=5, window=100)
    clock.now += 50
    store.hit("new", limit=5, window=10)
    assert set(ThrottleWindow.objects.values_list("key", flat=True)) == {"live", "new"}


def test_clear_forgets_every_count():
    store = DatabaseWindowStore()
    store.hit("k", limit=1, window=60)
    store.clear()
    assert store.hit("k", limit=1, window=60) is None


def _race(hit, *, threads: int, limit: int) -> list:
    barrier = threading.Barrier(threads)
    results: list = []
    lock = threading.Lock()

    def run():
        try:
            barrier.wait()
            outcome = hit(limit)
            with lock:
                results.append(outcome)
        finally:
            connection.close()

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return results


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_database_store_lets_exactly_the_limit_through_concurrent_requests():
    store = DatabaseWindowStore()
    results = _race(lambda limit: store.hit("race", limit=limit, window=60), threads=16, limit=5)
    assert len(results) == 16
    assert results.count(None) == 5
    assert len(ThrottleWindow.objects.get(key="race").hits) == 5


@pytest.mark.postgres
def test_the_windows_table_skips_the_write_ahead_log():
    """Unlogged: a hit's commit does not wait for the disk (ThrottleWindow says what a
    crash then forgets)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relpersistence FROM pg_class WHERE oid = %s::regclass",
            [ThrottleWindow._meta.db_table],
        )
        assert cursor.fetchone() == ("u",)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_hit_is_one_prepared_statement_of_its_own():
    """Outside a transaction each hit is one statement, its own transaction, prepared on
    the connection and run from it every time after; the connection's durability stays."""
    store = DatabaseWindowStore()
    with CaptureQueriesContext(connection) as queries:
        assert store.hit("prepared", limit=2, window=60) is None
        assert store.hit("prepared", limit=2, window=60) is None
        assert store.hit("prepared", limit=2, window=60) is not None  # counted all the same
    upserts = [query["sql"] for query in queries.captured_queries if "INSERT" in query["sql"]]
    assert len(upserts) == 3
    assert all(sql.startswith("\nINSERT INTO") and ";" not in sql for sql in upserts)
    hits = prepared_statements('%INSERT INTO "organizations_throttlewindow"%')
    assert [runs for _, runs in hits] == [3]
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone() == ("on",)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_the_hit_leaves_its_durability_alone():
    store = DatabaseWindowStore()
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        assert store.hit("durable", limit=2, window=60) is None
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone() == ("on",)
    upserts = [query["sql"] for query in queries.captured_queries if "INSERT" in query["sql"]]
    assert len(upserts) == 1 and "synchronous_commit" not in upserts[0]
    assert ThrottleWindow.objects.get(key="durable").hits


# --- the Redis store, when a Redis server is reachable ----------------------------------------


@pytest.fixture
def redis_store():
    url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15"
    parsed = urlparse(url)
    try:
        socket.create_connection((parsed.hostname, parsed.port or 6379), timeout=0.5).close()
    except OSError:
        pytest.skip("no Redis reachable (REDIS_URL, else 127.0.0.1:6379)")
    return RedisWindowStore(RedisCache(url, {}))


def test_redis_store_limits_and_slides(redis_store):
    key = f"throttle:test:{uuid.uuid4()}"
    assert [redis_store.hit(key, limit=2, window=1) for _ in range(2)] == [None, None]
    wait = redis_store.hit(key, limit=2, window=1)
    assert wait is not None and 0 < wait <= 1
    time.sleep(wait + 0.05)
    assert redis_store.hit(key, limit=2, window=1) is None


def test_redis_store_lets_exactly_the_limit_through_concurrent_requests(redis_store):
    key = f"throttle:test:{uuid.uuid4()}"
    results = _race(lambda limit: redis_store.hit(key, limit=limit, window=60), threads=16, limit=5)
    assert results.count(None) == 5 and len(results) == 16


def test_redis_store_clear_forgets_only_throttle_counts(redis_store):
    key = f"throttle:test:{uuid.uuid4()}"
    other = f"not-a-throttle:{uuid.uuid4()}"
    redis_store.cache.set(other, 1, 60)
    redis_store.hit(key, limit=1, window=60)
    redis_store.clear()
    assert redis_store.hit(key, limit=1, window=60) is None
    assert redis_store.cache.get(other) == 1
    redis_store.cache.delete(other)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_window_purged_by_another_request_meanwhile_is_started_again():
    """Every hit finds its key's window passed, so every hit purges the others' rows while
    they are being counted; a row purged between its insert and its lock is inserted again,
    never a 500 (DoesNotExist)."""
    clock = itertools.count(1_000_000.0, 100.0)
    store = DatabaseWindowStore(clock=lambda: next(clock))
    errors = []

    def hammer(index: int) -> None:
        try:
            for _ in range(40):
                assert store.hit(f"stale-{index % 4}", limit=5, window=60) is None
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    workers = [threading.Thread(target=hammer, args=(i,)) for i in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
