"""A sliding-window rate limit whose counts every server process shares.

``InviteLookupThrottle`` lets at most N requests per client address through in ANY window of
T seconds (the contract's "at most 60 lookups in any 60-second window"), not N per
calendar minute: a fixed-window counter would let 2N through across a window boundary.
A store remembers, per key, the times of the requests it let through within the window
(at most N of them) and decides under an atomic step, so concurrent processes cannot both
take the last slot:

- ``RedisWindowStore`` when ``caches["shared"]`` is Redis (``REDIS_URL`` set): one Lua
  script per request on a sorted set; Redis runs a script atomically.
- ``DatabaseWindowStore`` otherwise: one ``ThrottleWindow`` row per key. One
  ``INSERT ... ON CONFLICT DO UPDATE`` statement counts a hit under the row's lock, on
  PostgreSQL and SQLite alike (``lms.db.windows``). Django's database cache has no atomic
  increment (its ``incr`` is a get then a set), hence a table of our own.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
import secrets
import time
from collections.abc import Callable
from typing import Protocol

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from lms.db.windows import SlidingWindow
from lms.ops.metrics import count_throttled
from lms.web import http
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
        """One statement counts the hit (``lms.db.windows``), in no transaction of our own;
        a refused hit then reads the key's hits, only to say how long to wait. On PostgreSQL
        the table is unlogged (``ThrottleWindow``), so a hit's commit does not wait for the
        disk."""
        now = self.clock()
        held = _WINDOWS.hit(key, now=now, window=window, limit=limit)
        if held is not None:
            if held == 1:
                with transaction.atomic():
                    self._purge(now, keep=key)
            return None
        # Refused: the hits as they are now, only to say how long to wait.
        hits = sorted(t for t in _WINDOWS.hits(key) if t > now - window)
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


# One statement counts a hit (lms.db.windows); a field added to ThrottleWindow with a
# default needs no change here, one without fails at import.
_WINDOWS = SlidingWindow(ThrottleWindow)


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
    address = http.client_address(request)
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def throttle_key(scope: str, subject: str) -> str:
    """Fixed length whatever the subject, and no client address stored in the clear."""
    return f"{_KEY_PREFIX}{scope}:{hashlib.sha256(subject.encode()).hexdigest()[:32]}"


def take_slot(scope: str, subject: str, *, limit: int, window: int) -> float | None:
    """Count a hit of ``subject`` (a client address, an organization's id) in ``scope`` in
    the shared store, unless ``limit`` hits were let through in the last ``window`` seconds:
    then the seconds until a slot frees up, the hit is not counted, and the refusal is (the
    metrics' ``lms_throttled_requests_total{scope}``)."""
    wait = shared_window_store().hit(throttle_key(scope, subject), limit=limit, window=window)
    if wait is not None:
        count_throttled(scope)
    return wait


class SharedSlidingWindowThrottle(BaseThrottle):
    """DRF throttle on ``DEFAULT_THROTTLE_RATES[scope]``, per client address, in the shared
    store. Every request that reaches it counts, whatever the view answers afterwards."""

    scope: str

    def allow_request(self, request, view) -> bool:
        limit, window = parse_rate(api_settings.DEFAULT_THROTTLE_RATES[self.scope])
        self._wait = take_slot(self.scope, client_address(request), limit=limit, window=window)
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


class InviteLookupThrottle(SharedSlidingWindowThrottle):
    scope = "invite_lookup"
