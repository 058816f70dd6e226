"""Metrics in the Prometheus text format, at ``GET /metrics`` with
``Authorization: Bearer <LMS_METRICS_TOKEN>`` (README "Metrics").

Nothing is counted, and ``/metrics`` is an unknown route (404), unless ``LMS_METRICS_TOKEN``
is set. With it, the settings export ``PROMETHEUS_MULTIPROC_DIR`` (``lms.env.metrics_dir``)
before prometheus-client is first imported: each process (every gunicorn worker, every task
worker of the machine) writes its counts to memory-mapped files of its own there, and a scrape,
answered by whichever worker, sums them all. gunicorn.conf.py removes the files of processes
that are gone when its master starts. Without the folder (tests in one process), counts stay
in the process's memory.

Series a scrape computes (the automations' lag, from the database) are registered by their
app with ``gauge_at_scrape``; the core names no feature.
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import time
from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from lms import errors

logger = logging.getLogger(__name__)

_registry = CollectorRegistry(auto_describe=True)

REQUESTS = Counter(
    "lms_requests",
    "Requests answered, by route (the URL pattern, not the path), method and status.",
    ["route", "method", "status"],
    registry=_registry,
)
# Most requests take a few milliseconds (docs/performance.md): the buckets are finer there
# than prometheus-client's.
REQUEST_DURATION = Histogram(
    "lms_request_duration_seconds",
    "Time from the request's arrival in the application to its response, by route.",
    ["route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
    registry=_registry,
)
AUTOMATION_RUNS = Counter(
    "lms_automation_runs",
    "Automation runs finished, by trigger and status (succeeded or failed).",
    ["trigger", "status"],
    registry=_registry,
)
THROTTLED = Counter(
    "lms_throttled_requests",
    "Requests a throttle refused (429), by the throttle's scope.",
    ["scope"],
    registry=_registry,
)
REPLICA_SKIPS = Counter(
    "lms_replica_skips",
    "Reads sent to the primary because the replica was down, lagging or failed mid-request.",
    ["reason"],
    registry=_registry,
)

# The database pools' state (LMS_DB_POOL), per process: sampled at most once a second after a
# request, and by the process answering a scrape; multiprocess mode keeps each live process's
# values apart (a ``pid`` label).
POOL_STATS = {
    "pool_size": "Connections the pool holds, in use or not.",
    "pool_available": "Connections idle in the pool, ready for a request.",
    "requests_waiting": "Requests waiting for a connection now.",
    "requests_num": "Connections asked of the pool since it opened.",
    "requests_errors": "Requests that got no connection within LMS_DB_POOL_TIMEOUT since the "
    "pool opened (each a 503).",
}
POOL = {
    stat: Gauge(
        f"lms_db_{stat}",
        documentation,
        ["database"],
        registry=_registry,
        multiprocess_mode="liveall",
    )
    for stat, documentation in POOL_STATS.items()
}
_POOL_EVERY = 1.0
_pool_sampled = [0.0]


def sample_pools(now: float) -> None:
    """The open pools' statistics into ``POOL``, at most once every ``_POOL_EVERY`` seconds
    (a pool that was never opened is not opened for it)."""
    if now - _pool_sampled[0] < _POOL_EVERY:
        return
    _pool_sampled[0] = now
    from django.db.backends.postgresql.base import DatabaseWrapper

    for alias, pool in list(DatabaseWrapper._connection_pools.items()):  # type: ignore[attr-defined]
        stats = pool.get_stats()
        for stat, gauge in POOL.items():
            gauge.labels(alias).set(stats.get(stat, 0))


# The classic text format, which every Prometheus reads (generate_latest writes it).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# A route label for what matched no URL pattern: one label, whatever the path.
UNMATCHED = "unmatched"
# Methods beyond these are one label, so a client cannot grow the series without bound.
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# (route label, method label, status) -> the request's counter and histogram, so that a
# request looks its series up in one dict instead of prometheus-client's label checks. Keyed
# by the labels themselves: routes, the methods kept and statuses are finite, so is the dict.
_request_series: dict[tuple, tuple] = {}
# Where the static files are served (STATIC_URL's path): WhiteNoise answers them before
# routing, so they are counted under it.
STATIC_PREFIX = "/" + urlsplit(settings.STATIC_URL).path.lstrip("/")


def start_at_zero(counter: Counter, *label_values: tuple[str, ...]) -> None:
    """Each of ``counter``'s series for these labels exists from the process's start, at 0:
    an alert on a rise (``increase(...) > 0``) needs the series before the first count. An
    app names its labels from its ``AppConfig.ready`` (its triggers, its throttles' scopes)."""
    for values in label_values:
        counter.labels(*values)


start_at_zero(REPLICA_SKIPS, ("down",), ("lagging",), ("failed",))


def collecting() -> bool:
    return bool(settings.LMS_METRICS_TOKEN)


def count_request(request: HttpRequest, status: int, seconds: float) -> None:
    """Count a response and its duration under its route's pattern."""
    match = request.resolver_match
    route = "/" + match.route if match is not None else _unrouted(request)
    method = request.method if request.method in _METHODS else "other"
    key = (route, method, status)
    series = _request_series.get(key)
    if series is None:
        series = _request_series.setdefault(
            key, (REQUESTS.labels(route, method, str(status)), REQUEST_DURATION.labels(route))
        )
    series[0].inc()
    series[1].observe(seconds)
    sample_pools(time.monotonic())


def _unrouted(request: HttpRequest) -> str:
    """The label of a request answered before routing: a static file's (WhiteNoise serves
    them), the route of a path that has one (the HTTPS redirect answers before the URL is
    resolved), or ``UNMATCHED``."""
    path = request.path_info
    if path.startswith(STATIC_PREFIX):
        return STATIC_PREFIX
    try:
        return "/" + resolve(path).route
    except Resolver404:
        return UNMATCHED


def count_automation_run(trigger: str, status: str) -> None:
    if collecting():
        AUTOMATION_RUNS.labels(trigger, status).inc()


def count_throttled(scope: str) -> None:
    if collecting():
        THROTTLED.labels(scope).inc()


def count_replica_skip(reason: str) -> None:
    if collecting():
        REPLICA_SKIPS.labels(reason).inc()


_at_scrape: dict[str, tuple[str, Callable[[], float]]] = {}


def gauge_at_scrape(name: str, documentation: str, read: Callable[[], float]) -> None:
    """A gauge whose value ``read()`` computes when a scrape asks for it (from the database:
    the same on every server). A failing ``read`` leaves the series out of that scrape."""
    _at_scrape[name] = (documentation, read)


class _ScrapeTimeCollector:
    def collect(self):
        for name, (documentation, read) in _at_scrape.items():
            try:
                value = read()
            except Exception as exc:  # the database is down: the other series still answer
                logger.warning("metric %s not computed: %s", name, exc)
                continue
            yield GaugeMetricFamily(name, documentation, value=value)


_scrape_time = _ScrapeTimeCollector()
_registry.register(_scrape_time)
# The process's own series (CPU seconds, memory, open files, Python's collections):
# prometheus-client's collectors. In multiprocess mode ``_ProcessesCollector`` answers them
# for every process of the machine instead.
for _collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    _registry.register(_collector)


_PID_IN_NAME = re.compile(r"_(\d+)\.db$")


class _ProcessesCollector:
    """``process_*`` of every live process that keeps counts in ``folder`` (each gunicorn
    worker, each task worker), read from its ``/proc`` entry, labelled ``pid``."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def collect(self):
        pids = sorted(
            {
                int(m.group(1))
                for name in os.listdir(self.folder)
                if (m := _PID_IN_NAME.search(name))
            }
        )
        families: dict[str, Metric] = {}
        for pid in pids:
            reader = ProcessCollector(registry=None, pid=lambda pid=pid: pid)
            for family in reader.collect():  # nothing for a process that is gone
                merged = families.setdefault(
                    family.name, Metric(family.name, family.documentation, family.type)
                )
                for sample in family.samples:
                    merged.add_sample(sample.name, {**sample.labels, "pid": str(pid)}, sample.value)
        yield from families.values()


def exposition() -> bytes:
    """Every series in the text format: summed over the machine's processes in
    multiprocess mode, else this process's."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not folder:
        return generate_latest(_registry)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=folder)
    registry.register(_scrape_time)
    registry.register(_ProcessesCollector(folder))
    return generate_latest(registry)


@csrf_exempt  # else a POST without the token met the CSRF check's 403, unlike an unknown route
def metrics_view(request: HttpRequest) -> HttpResponse:
    """``GET /metrics`` for the bearer of ``LMS_METRICS_TOKEN``; to anyone else, and to
    everyone when no token is set, whatever the method, the 404 of an unknown route."""
    expected = settings.LMS_METRICS_TOKEN
    scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if not (
        expected
        and scheme.lower() == "bearer"
        and hmac.compare_digest(given.strip().encode(), expected.encode())
    ):
        return errors.not_found_view(request)
    if request.method not in ("GET", "HEAD"):
        return errors.error_response(errors.MethodNotAllowed(), Allow="GET, HEAD")
    _pool_sampled[0] = 0.0  # this process's pools as they are now
    sample_pools(time.monotonic())
    return HttpResponse(exposition(), content_type=CONTENT_TYPE)
