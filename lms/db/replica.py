"""The API's reads on a PostgreSQL standby (``LMS_DATABASE_REPLICA_URL``), its writes on the
primary, and every caller reading their own writes.

Installed only when a replica is configured (``lms.settings``): the ``replica`` database
alias, ``ReplicaRouter`` in ``DATABASE_ROUTERS`` and ``ReplicaMiddleware`` after the error
middleware. Without a replica nothing here runs.

Where a read goes, decided once per request (``read_alias``) and honoured by the ORM (through
the router) and by the hand-built reads of ``lms.db.compiled`` (which ask the router per call):

- **Outside an API request** (the admin, management commands, the task workers, the health
  probes): the primary. The admin's staff and the workers read what they have just written.
- **A write request** (any method but GET, HEAD, OPTIONS under ``/api/``): the primary, from
  its first read to its last; the caller's token is then *pinned* to the primary for
  ``LMS_REPLICA_PIN_SECONDS``.
- **A read request**: the primary while a transaction is open on it (``atomic``), for a
  token pinned by a recent write (the pin is kept in ``caches["shared"]``, so every server
  process sees it: Redis with ``REDIS_URL``, else the database cache table on the primary),
  once the request itself has written anything (``db_for_write``; the request is then
  pinned too), and while the replica is down or lagging; the replica otherwise.
- Writes, ``select_for_update`` and the bearer token's lookup always go to the primary.

The replica's health is measured by one query, at most every ``LMS_REPLICA_CHECK_SECONDS``
per process, by whichever request needs it first: a replica that does not answer, or whose
replay is more than ``LMS_REPLICA_MAX_LAG_SECONDS`` behind, is skipped for the primary until
the next check. A read request whose query failed on the replica (it went down between two
checks) is answered again from the primary: a GET is safe to run twice. Each request sent
to the primary because of the replica's state is counted (``lms_replica_skips_total``).

Why a caller always reads their own writes: a write pins the token for the pin time, and
after it the replica serves the token only if it was at most the maximum lag behind when last
measured; so ``LMS_REPLICA_MAX_LAG_SECONDS + LMS_REPLICA_CHECK_SECONDS`` must not exceed
the pin time (the settings refuse otherwise).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import logging
import pickle
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.db import DatabaseCache
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from lms.db.compiled import preparing_cursor
from lms.ops import metrics

logger = logging.getLogger("lms.db.replica")

PRIMARY = DEFAULT_DB_ALIAS
REPLICA = "replica"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
API_PREFIX = "/api/"
# Tables that are read and written on the primary only, whoever asks: Django's database
# cache (the pins themselves) and the throttle's windows.
_PRIMARY_ONLY = frozenset({("django_cache", "cacheentry"), ("organizations", "throttlewindow")})

# How far the replica's replay is behind, in seconds: 0 when it has replayed all it received
# (an idle primary sends nothing, and the last replayed transaction's time would then grow
# without any lag); NULL when it is not streaming from a primary (its age is unknown).
# A database that is not in recovery (a primary given as the replica) is not behind.
_LAG_SQL = """
SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN 0
    WHEN NOT EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') THEN NULL
    WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
    ELSE EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())::float8
END
"""


# --- Skips: requests sent to the primary because of the replica's state ------------------
def _skip(reason: str) -> None:
    """Counts a request sent to the primary (``lms_replica_skips_total``): ``down`` (the
    health check found no replica), ``lagging`` (its replay was more than the maximum lag
    behind, or not streaming) or ``failed`` (a query failed on it mid-request, and the
    request was answered again from the primary)."""
    metrics.count_replica_skip(reason)


# --- The replica's health, per process ----------------------------------------------------
class _Health:
    def __init__(self) -> None:
        self.checked_at = float("-inf")
        self.problem: str | None = None  # None: usable; else a skip reason
        self._lock = threading.Lock()

    def problem_now(self) -> str | None:
        """Why the replica cannot serve reads now (None: it can). Measured again when the
        last measure is older than the check interval, by one thread while the others go
        on with the last answer."""
        stale = time.monotonic() - self.checked_at >= settings.LMS_REPLICA_CHECK_SECONDS
        if stale and self._lock.acquire(blocking=False):
            try:
                self.problem = _measure()
                self.checked_at = time.monotonic()
            finally:
                self._lock.release()
        return self.problem

    def failed(self) -> None:
        """A query failed on the replica: skip it until the next check."""
        self.problem, self.checked_at = "down", time.monotonic()


health = _Health()


def _measure() -> str | None:
    connection = connections[REPLICA]
    try:
        with connection.cursor() as cursor:
            cursor.execute(_LAG_SQL)
            (lag,) = cursor.fetchone()
    except DatabaseError as error:
        logger.warning("read replica unavailable, reading from the primary: %s", error)
        _close(REPLICA)
        return "down"
    if lag is None or lag > settings.LMS_REPLICA_MAX_LAG_SECONDS:
        logger.warning("read replica lagging (%s s), reading from the primary", lag)
        return "lagging"
    return None


def _close(alias: str) -> None:
    # A connection already broken may close with an error of its own.
    with contextlib.suppress(DatabaseError):
        connections[alias].close()


# --- The request's routing state ------------------------------------------------------------
@dataclass
class _Request:
    token: str  # the bearer token as sent ("" without one)
    alias: str | None = None  # where its reads go, once decided
    wrote: bool = False


_current: ContextVar[_Request | None] = ContextVar("lms_replica_request", default=None)


def read_alias() -> str:
    """Where a read made now goes (see the module's docstring)."""
    state = _current.get()
    if state is None or state.wrote or connections[PRIMARY].in_atomic_block:
        return PRIMARY
    if state.alias is None:
        state.alias = _decide(state)
    return state.alias


def _decide(state: _Request) -> str:
    problem = health.problem_now()
    if problem is not None:
        _skip(problem)
        return PRIMARY
    if state.token and _pinned(state.token):
        return PRIMARY
    connections[REPLICA].errors_occurred = False  # so that a failure is this request's own
    return REPLICA


class _Pins:
    """The pins, in ``caches["shared"]``'s store, without the cache's per-call machinery
    (read on every read request the replica could serve, written once a write request):

    - Redis: ``EXISTS`` and ``SET ... EX`` on the cache's own client, kept per process
      (Django's Redis cache builds a client on every call, most of a lookup's cost);
    - the database cache table: one prepared statement on the primary each way, an upsert
      of the token's row (``DatabaseCache.set`` selects, then updates or inserts, and culls
      the table beyond 300 rows, which could drop a live pin; ``get`` unpickles the value
      and checks the expiry in Python). One row per token that wrote, renewed by its writes.

    docs/performance.md measures both."""

    # What DatabaseCache stores for the value 1, so that its own reads agree.
    _DB_VALUE = base64.b64encode(pickle.dumps(1, pickle.HIGHEST_PROTOCOL)).decode("latin1")

    def __init__(self) -> None:
        self._redis = None

    def _store(self, token: str):
        cache = caches["shared"]
        key = cache.make_key("lms:replica-pin:" + hashlib.sha256(token.encode()).hexdigest())
        if isinstance(cache, RedisCache):
            if self._redis is None:
                self._redis = cache._cache.get_client(key, write=True)  # type: ignore[assignment]
            return self._redis, key, None
        if isinstance(cache, DatabaseCache):
            connection = connections[PRIMARY]
            return connection, key, connection.ops.quote_name(cache._table)  # type: ignore[attr-defined]
        raise ImproperlyConfigured("A read replica keeps its pins in Redis or the database cache.")

    def pinned(self, token: str) -> bool:
        store, key, table = self._store(token)
        if table is None:
            return bool(store.exists(key))
        with preparing_cursor(store) as cursor:
            cursor.execute(
                f"SELECT 1 FROM {table} WHERE cache_key = %s AND expires > %s",
                [key, timezone.now()],
            )
            return cursor.fetchone() is not None

    def pin(self, token: str) -> None:
        seconds = settings.LMS_REPLICA_PIN_SECONDS
        store, key, table = self._store(token)
        if table is None:
            store.set(key, 1, ex=seconds)
            return
        with preparing_cursor(store) as cursor:
            cursor.execute(
                f"INSERT INTO {table} (cache_key, value, expires) VALUES (%s, %s, %s)"
                " ON CONFLICT (cache_key) DO UPDATE SET value = EXCLUDED.value,"
                " expires = EXCLUDED.expires",
                [key, self._DB_VALUE, timezone.now() + timedelta(seconds=seconds)],
            )


pins = _Pins()


def _pinned(token: str) -> bool:
    try:
        return pins.pinned(token)
    except Exception:  # the shared cache is down: the primary is always right
        logger.warning("replica pin unreadable, reading from the primary", exc_info=True)
        return True


def _pin(token: str) -> None:
    try:
        pins.pin(token)
    except Exception:  # the write is done; the caller must still get its answer
        logger.warning("replica pin not kept: the caller may read from the replica", exc_info=True)


def _token(request: HttpRequest) -> str:
    parts = request.META.get("HTTP_AUTHORIZATION", "").split()
    return parts[-1] if len(parts) == 2 else ""


def _exempt(model) -> bool:
    return (model._meta.app_label, model._meta.model_name) in _PRIMARY_ONLY


class ReplicaRouter:
    """Reads where ``read_alias`` says, writes (and ``select_for_update``) on the primary;
    a write during a read request pins it (and its token) to the primary."""

    def db_for_read(self, model, **hints) -> str:
        return PRIMARY if _exempt(model) else read_alias()

    def db_for_write(self, model, **hints) -> str:
        state = _current.get()
        if state is not None and not _exempt(model):
            state.wrote = True
        return PRIMARY

    def allow_relation(self, obj1, obj2, **hints) -> bool:
        return True  # one database's rows, wherever they were read

    def allow_migrate(self, db, app_label, model_name=None, **hints) -> bool:
        return db == PRIMARY  # the replica follows the primary's schema


class ReplicaMiddleware:
    """Sets the request's routing state for ``/api/`` requests, pins a token that wrote,
    and answers again from the primary a read request whose replica failed mid-way."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        token = _token(request)
        if request.method not in SAFE_METHODS:
            response = self.get_response(request)
            if token and response.status_code != 401 and settings.LMS_REPLICA_PIN_SECONDS > 0:
                _pin(token)
            return self._shown(response, PRIMARY)
        state = _Request(token)
        reset = _current.set(state)
        try:
            response = self.get_response(request)
            if state.alias == REPLICA and connections[REPLICA].errors_occurred:
                logger.warning("a read failed on the replica; answered again from the primary")
                _skip("failed")
                health.failed()
                _close(REPLICA)
                state = _Request(token, alias=PRIMARY)
                _current.set(state)
                response = self.get_response(request)
            if state.wrote and token and response.status_code != 401:
                _pin(token)
            return self._shown(response, state.alias or PRIMARY)
        finally:
            _current.reset(reset)

    @staticmethod
    def _shown(response: HttpResponse, alias: str) -> HttpResponse:
        """With ``LMS_REPLICA_DEBUG_HEADER``: ``X-Database-Standby``, the answer of
        ``pg_is_in_recovery()`` on the connection the request's reads used (one more query;
        for tests and diagnosis, off by default)."""
        if settings.LMS_REPLICA_DEBUG_HEADER:
            try:
                with connections[alias].cursor() as cursor:
                    cursor.execute("SELECT pg_is_in_recovery()")
                    response["X-Database-Standby"] = "true" if cursor.fetchone()[0] else "false"
            except DatabaseError:
                response["X-Database-Standby"] = "unknown"
        return response
