"""A sliding-window rate limit whose counts every server process shares.

``InviteLookupThrottle`` lets at most N requests per client address through in ANY window of
T seconds (the contract's "at most 60 lookups in any 60-second window"), not N per
calendar minute: a fixed-window counter would let 2N through across a window boundary.
A store remembers, per key, the times of the requests it let through within the window
(at most N of them) and decides under an atomic step, so concurrent processes cannot both
take the last slot:

- ``RedisWindowStore`` when ``caches["shared"]`` is Redis (``REDIS_URL`` set): one Lua
  script per request on a sorted set; Redis runs a script atomically.
- ``DatabaseWindowStore`` otherwise: one ``ThrottleWindow`` row per key. On PostgreSQL one
  ``INSERT ... ON CONFLICT DO UPDATE`` statement counts a hit under the row's lock; on
  SQLite the row is read and written in a transaction (every write transaction is
  ``BEGIN IMMEDIATE`` there, which serializes them). Django's database cache has
  no atomic increment (its ``incr`` is a get then a set), hence a table of our own.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import secrets
import time
from collections.abc import Callable
from typing import Protocol

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from lms.db import statements
from lms.db.compiled import preparing_cursor
from lms.ops.metrics import count_throttled
from organizations.models import ThrottleWindow

_RATE = re.compile(r"^(\d+)/(\d*)(s|sec|second|m|min|minute|h|hour|d|day)s?$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Rows purged at most per request, so no single request pays for a long quiet spell.
_PURGE_BATCH = 500


def parse_rate(rate: str) -> tuple[int, int]:
    """``"60/min"`` -> (60, 60); ``"5/10s"`` -> (5, 10): (requests, window in seconds)."""
    match = _RATE.match((rate or "").replace(" ", ""))
    if not match or int(match[1]) < 1 or match[2] == "0":
        raise ImproperlyConfigured(
            f"A throttle rate is 'N/period' with period s, min, h or day (or e.g. 10s): {rate!r}"
        )
    return int(match[1]), int(match[2] or 1) * _SECONDS[match[3][0]]


class WindowStore(Protocol):
    def hit(self, key: str, *, limit: int, window: int) -> float | None:
        """Let the request through and count it (None), unless ``limit`` requests were
        already let through in the last ``window`` seconds: then the seconds until a slot
        frees up, and the request is not counted."""

    def clear(self) -> None:
        """Forget every count (tests, or an operator lifting a block)."""


class DatabaseWindowStore:
    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock

    def hit(self, key: str, *, limit: int, window: int) -> float | None:
        if connection.vendor == "postgresql":
            return self._upsert(key, limit=limit, window=window)
        with transaction.atomic():
            row = None
            while row is None:
                ThrottleWindow.objects.bulk_create(
                    [ThrottleWindow(key=key, hits=[], expires=0)], ignore_conflicts=True
                )
                # A passed window's row that another request purged between the insert
                # (which found it) and this lock is gone: insert it again.
                row = ThrottleWindow.objects.select_for_update().filter(key=key).first()
            # Read the clock only once the row is ours, so the stored hits stay in order.
            now = self.clock()
            hits = sorted(t for t in row.hits if t > now - window)
            if len(hits) >= limit:
                return hits[len(hits) - limit] + window - now
            first_in_window = not hits
            hits.append(now)
            row.hits, row.expires = hits, now + window
            row.save(update_fields=["hits", "expires"])
            if first_in_window:
                self._purge(now, keep=key)
        return None

    def _upsert(self, key: str, *, limit: int, window: int) -> float | None:
        """PostgreSQL: one ``INSERT ... ON CONFLICT DO UPDATE`` counts the hit, no
        transaction of our own, prepared on the connection (``lms.db.compiled``). The conflict
        locks the key's row (concurrent hits on one key queue there, as behind
        ``FOR UPDATE``); its ``WHERE`` refuses the hit when the window is full, and then
        nothing is returned. A row purged meanwhile is inserted again by PostgreSQL itself.
        The table is unlogged (``ThrottleWindow``), so the hit's commit does not wait for the
        disk."""
        now = self.clock()
        params = {"key": key, "now": now, "since": now - window, "limit": limit,
                  "renew_before": now + window, "expires": now + 2 * window}  # fmt: skip
        for n, (field, make) in enumerate(_FILLED):
            params[f"fill_{n}"] = field.get_db_prep_save(make(), connection)
        with preparing_cursor(connection) as cursor:
            cursor.execute(_UPSERT_SQL, params)
            row = cursor.fetchone()
            if row is None:
                # Refused: the hits as they are now, only to say how long to wait.
                cursor.execute(_HITS_SQL, [key])
                found = cursor.fetchone()
        if row is not None:
            if row[0] == 1:
                with transaction.atomic():
                    self._purge(now, keep=key)
            return None
        hits = sorted(t for t in (_json_list(found[0]) if found else []) if t > now - window)
        if len(hits) < limit:  # a slot freed up since: try again at once
            return 0.0
        return hits[len(hits) - limit] + window - now

    @staticmethod
    def _purge(now: float, *, keep: str) -> None:
        """Delete rows whose window has passed. Only when a key starts a new window, so the
        cost follows the number of clients, not of requests; SKIP LOCKED (PostgreSQL) so a
        purge never waits on, or deadlocks with, a row another request holds."""
        stale = (
            ThrottleWindow.objects.filter(expires__lt=now)
            .exclude(key=keep)
            .select_for_update(skip_locked=True)
            .values("key")[:_PURGE_BATCH]
        )
        ThrottleWindow.objects.filter(key__in=stale).delete()

    def clear(self) -> None:
        ThrottleWindow.objects.all().delete()


_quote = connection.ops.quote_name
_META = ThrottleWindow._meta
_TABLE = _quote(_META.db_table)
_KEY, _HITS, _EXPIRES = (
    _quote(_META.get_field(name).column) for name in ("key", "hits", "expires")
)
# Any other column of the table, filled as the model would (``lms.db.statements.fillers``):
# a field added with a default needs no change here; one without fails at import.
_FILLED = statements.fillers(
    ThrottleWindow,
    [_META.get_field(name) for name in ("key", "hits", "expires")],
    by="The throttle's upsert (organizations.throttling)",
)
_FILLED_COLUMNS = "".join(f", {_quote(field.column)}" for field, _ in _FILLED)
_FILLED_VALUES = "".join(f", %(fill_{n})s" for n in range(len(_FILLED)))
# The hits still in the window: a JSON path filter, run in C over the stored array (casting
# each element to float8 in SQL and aggregating them again cost more for every hit kept).
_KEPT = (
    f"jsonb_path_query_array(w.{_HITS}, '$[*] ? (@ > $since)',"
    " jsonb_build_object('since', %(since)s::float8))"
)
# The hits in the window and this one, or nothing when the window is full. It answers how
# many hits the window now holds (1: this hit starts it). On PostgreSQL the hits are kept in
# the order they were written, not sorted: only their count and the oldest matter.
# ``expires`` (indexed, for the purge) moves two windows ahead, and only once it is less
# than a window away: it stays past the last hit's window, and most hits leave it as it was,
# so their update is a HOT one (no index entry; the page is pruned without a vacuum). A
# hit that moved it on every request wrote three index entries and left a dead row version
# each time.
_UPSERT_SQL = f"""
INSERT INTO {_TABLE} AS w ({_KEY}, {_HITS}, {_EXPIRES}{_FILLED_COLUMNS})
VALUES (%(key)s, jsonb_build_array(%(now)s::float8), %(expires)s{_FILLED_VALUES})
ON CONFLICT ({_KEY}) DO UPDATE SET
  {_HITS} = {_KEPT} || to_jsonb(%(now)s::float8),
  {_EXPIRES} = CASE WHEN w.{_EXPIRES} < %(renew_before)s THEN %(expires)s ELSE w.{_EXPIRES} END
WHERE jsonb_array_length({_KEPT}) < %(limit)s
RETURNING jsonb_array_length({_HITS})
"""
_HITS_SQL = f"SELECT {_HITS} FROM {_TABLE} WHERE {_KEY} = %s"


def _json_list(value) -> list:
    # psycopg decodes jsonb itself; a driver that does not hands over the text.
    return json.loads(value) if isinstance(value, str | bytes) else value


# KEYS[1] the sorted set of let-through times; ARGV: window seconds, limit, a unique member.
# The clock is the Redis server's, so application servers with skewed clocks agree.
_SLIDING_WINDOW_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.6f', now - window))
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], string.format('%.6f', now), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window * 1000))
  return {1, '0'}
end
local oldest = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
return {0, string.format('%.6f', tonumber(oldest[2]) + window - now)}
"""
_KEY_PREFIX = "throttle:"


class RedisWindowStore:
    def __init__(self, cache: RedisCache):
        self.cache = cache

    def _client(self):
        # Django's Redis cache exposes no scripting; its client pool is reused as it is.
        return self.cache._cache.get_client(write=True)

    def hit(self, key: str, *, limit: int, window: int) -> float | None:
        client = self._client()
        script = client.register_script(_SLIDING_WINDOW_LUA)
        allowed, wait = script(
            keys=[self.cache.make_and_validate_key(key)],
            args=[window, limit, secrets.token_hex(8)],
            client=client,
        )
        return None if int(allowed) == 1 else float(wait)

    def clear(self) -> None:
        client = self._client()
        pattern = self.cache.make_and_validate_key(_KEY_PREFIX) + "*"
        for found in client.scan_iter(match=pattern, count=500):
            client.delete(found)


def shared_window_store() -> WindowStore:
    cache = caches["shared"]
    if isinstance(cache, RedisCache):
        return RedisWindowStore(cache)
    return DatabaseWindowStore()


def client_address(request) -> str:
    """The address the throttle counts a request against.

    ``X-Forwarded-For`` is believed only as far as ``LMS_NUM_PROXIES`` trusted proxies
    (anyone can send the header, so believing it by default would let a client pick a fresh
    address per request). An IPv6 address counts by its /64, the block one subscriber holds.
    """
    address = request.META.get("REMOTE_ADDR") or ""
    num_proxies = api_settings.NUM_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")  # not request.headers: see lms.web.http
    if num_proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",")]
        address = hops[-min(num_proxies, len(hops))]
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def throttle_key(scope: str, address: str) -> str:
    """Fixed length whatever the address, and no client address stored in the clear."""
    return f"{_KEY_PREFIX}{scope}:{hashlib.sha256(address.encode()).hexdigest()[:32]}"


class SharedSlidingWindowThrottle(BaseThrottle):
    """DRF throttle on ``DEFAULT_THROTTLE_RATES[scope]``, per client address, in the shared
    store. Every request that reaches it counts, whatever the view answers afterwards."""

    scope: str

    def allow_request(self, request, view) -> bool:
        limit, window = parse_rate(api_settings.DEFAULT_THROTTLE_RATES[self.scope])
        key = throttle_key(self.scope, client_address(request))
        self._wait = shared_window_store().hit(key, limit=limit, window=window)
        if self._wait is not None:
            count_throttled(self.scope)
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


class InviteLookupThrottle(SharedSlidingWindowThrottle):
    scope = "invite_lookup"
