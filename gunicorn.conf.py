"""Production server settings: `gunicorn -c gunicorn.conf.py lms.wsgi`. Sized from the CPUs."""

import gc
import os
import socket
import sys

from lms.env import env_bool, metrics_dir

bind = os.environ.get("LMS_BIND", "127.0.0.1:8000")
# Each worker listens on a socket of its own (SO_REUSEPORT) and the kernel spreads new
# connections across them. On one shared socket whichever worker woke first took the
# connection: under keep-alive load one worker often held 13 to all 16 of the bench's
# connections while the other idled (with all 16, half the throughput). A worker that exits
# drops the connections still queued on its socket, unaccepted: another reason workers are
# not retired after a count (below). LMS_REUSE_PORT=false shares one socket again.
reuse_port = env_bool("LMS_REUSE_PORT", True)


def _usable_cpus() -> int:
    """The CPUs this process may run on (a container's or a cgroup's share, not the host's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# One worker per usable CPU, one request thread each. A request here is mostly Python (far
# more of it than of database work), so more requests in flight than CPUs only queue for the
# interpreter lock and hand it to each other. Measured alternated against more workers and
# more threads a worker (docs/performance.md), one thread a worker answered more requests
# with the lower p99. The price is
# concurrency: a request that waits (a slow query, a client stalled mid-body) holds its
# worker's only thread, so serve behind a buffering proxy (README) and raise LMS_THREADS
# where requests wait on something slow.
workers = int(os.environ.get("LMS_WORKERS", _usable_cpus()))
worker_class = "gthread"
threads = int(os.environ.get("LMS_THREADS", "1"))
timeout = int(os.environ.get("LMS_TIMEOUT", "30"))
graceful_timeout = 30
keepalive = 5
# A worker is not retired after a number of requests unless LMS_MAX_REQUESTS asks for it
# (gunicorn's own default). Under keep-alive load a retiring worker's connections move to the
# workers still running and stay there: every retirement left one worker serving all of
# them while its replacement sat idle (the bare ceiling answered 3,500 requests a second
# instead of 6,000 with 10,000 requests per worker), and a worker's memory does not grow
# with the requests it answers (docs/performance.md).
max_requests = int(os.environ.get("LMS_MAX_REQUESTS", "0"))
max_requests_jitter = max_requests // 20
# Our middleware writes one JSON access line per request with the request id.
accesslog = None
errorlog = "-"
loglevel = os.environ.get("LMS_LOG_LEVEL", "info").lower()
# gunicorn's own lines (its start, its workers' boots and exits, a timeout) are JSON like the
# application's, on stderr, so one stream parses whole.
_json_to_stderr = {
    "class": "logging.StreamHandler",
    "formatter": "json",
    "stream": "ext://sys.stderr",
}
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "lms.ops.logs.JsonFormatter"}},
    "handlers": {"console": _json_to_stderr, "error_console": _json_to_stderr},
    "root": {"level": loglevel.upper(), "handlers": ["console"]},
    "loggers": {
        "gunicorn.error": {
            "level": loglevel.upper(),
            "handlers": ["error_console"],
            "propagate": False,
            "qualname": "gunicorn.error",
        },
    },
}
wsgi_app = "lms.wsgi:application"
# The application (Django, the project, its URLconf) is loaded once, in the master, and each
# worker is forked from it. A worker that replaces another (one that crashed, timed out, or
# was retired under LMS_MAX_REQUESTS) then answers at once, instead of spending CPU importing
# everything again while its siblings serve every connection: under load that import was
# where the slowest requests came from (docs/performance.md). LMS_PRELOAD=false loads the
# application in each worker instead.
preload_app = env_bool("LMS_PRELOAD", True)


# With LMS_METRICS_TOKEN, every worker keeps its metrics in files under one folder that a
# scrape sums (lms/ops/metrics.py); exported before the application is loaded.
metrics_folder = metrics_dir() if os.environ.get("LMS_METRICS_TOKEN") else None


def on_starting(server):
    """The start line names the address (``_ListeningAt``), the metrics of processes that
    are gone are forgotten, and, with a socket per worker, a second server started on an
    address already served, which would bind beside the first one's workers and take a
    share of its connections silently, stops here instead, as it would on one shared socket
    ("address already in use")."""
    server.log.error_log.addFilter(_ListeningAt(server.cfg.address))
    if metrics_folder:
        _forget_gone_processes(metrics_folder)
    if not reuse_port:
        return
    for address in server.cfg.address:
        if not isinstance(address, tuple):  # a Unix socket path: gunicorn itself checks it
            continue
        host, port = address
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                server.log.error("Cannot listen at %s:%s: %s", host, port, exc.strerror)
                sys.exit(1)


class _ListeningAt:
    """With a socket per worker the master opens none itself, and gunicorn's start line
    reads "Listening at:  (pid)"; it names the address it was given instead."""

    def __init__(self, addresses):
        self.text = ",".join(
            f"unix:{address}"
            if not isinstance(address, tuple)
            else f"http://[{address[0]}]:{address[1]}"
            if ":" in address[0]
            else f"http://{address[0]}:{address[1]}"
            for address in addresses
        )

    def filter(self, record) -> bool:
        if str(record.msg).startswith("Listening at:") and record.args and not record.args[0]:
            record.args = (self.text, *record.args[1:])
        return True


def _forget_gone_processes(folder: str) -> None:
    """Removes the metric files of processes no longer running (``counter_<pid>.db``, ...):
    a restarted server counts from zero, as Prometheus expects of a restart. The files of a
    task worker still running on this machine, which wrote there before this master started,
    stay."""
    for name in os.listdir(folder):
        pid = name.removesuffix(".db").rpartition("_")[2]
        if not (name.endswith(".db") and pid.isdigit()):
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            os.remove(os.path.join(folder, name))
        except PermissionError:  # running, as another user
            pass


def child_exit(server, worker):
    """A worker's counts stay with its files (a scrape still sums them); only its live
    gauges, should any series be one, are dropped (prometheus-client's bookkeeping)."""
    if metrics_folder:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid, metrics_folder)


def pre_fork(server, worker):
    """No database connection may cross the fork: loading the application opens none, and
    any that something opened in the master is closed here (a child would share its socket).
    What the master loaded is then frozen for the cyclic garbage collector (``_freeze``)."""
    if preload_app:
        from django.db import connections

        connections.close_all()
        _freeze()


def post_worker_init(worker):
    """Without preloading, each worker freezes what it loaded itself."""
    if not preload_app:
        _freeze()


def _freeze():
    """Moves every object alive now (Django, the project, the URLconf: most of a worker's
    heap, alive until it exits) out of the cyclic garbage collector's reach, as CPython's
    ``gc.freeze`` documentation advises before a fork. A full collection of a worker then
    walks what requests left, not the whole application: under load, collections of the
    oldest generation had stopped all of a worker's threads long enough to make the
    slowest requests of a run; frozen, they are short. A forked worker also stops writing to
    the pages it shares with the master (docs/performance.md)."""
    gc.collect()
    gc.freeze()


# Gunicorn 25+ opens a control socket at one path per user; two servers on one host would
# fight over it. Opt in with LMS_CONTROL_SOCKET=true where gunicornc is wanted.
control_socket_disable = os.environ.get("LMS_CONTROL_SOCKET", "").lower() not in {"1", "true"}
