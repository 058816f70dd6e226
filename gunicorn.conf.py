"""Production server settings: `gunicorn -c gunicorn.conf.py lms.wsgi`. Sized from the CPUs."""

import multiprocessing
import os

from lms.env import env_bool

bind = os.environ.get("LMS_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("LMS_WORKERS", multiprocessing.cpu_count() * 2 + 1))
worker_class = "gthread"
threads = int(os.environ.get("LMS_THREADS", "4"))
timeout = int(os.environ.get("LMS_TIMEOUT", "30"))
graceful_timeout = 30
keepalive = 5
max_requests = int(os.environ.get("LMS_MAX_REQUESTS", "10000"))
max_requests_jitter = 500
# Our middleware writes one JSON access line per request with the request id.
accesslog = None
errorlog = "-"
loglevel = os.environ.get("LMS_LOG_LEVEL", "info").lower()
wsgi_app = "lms.wsgi:application"
# The application (Django, the project, its URLconf) is loaded once, in the master, and each
# worker is forked from it. A worker that replaces one retired after max_requests then
# answers at once, instead of spending a second of CPU importing everything again while its
# siblings serve every connection: under load those seconds were the slowest 1% of requests
# (docs/performance.md). LMS_PRELOAD=false loads the application in each worker instead.
preload_app = env_bool("LMS_PRELOAD", True)


def pre_fork(server, worker):
    """No database connection may cross the fork: loading the application opens none, and
    any that something opened in the master is closed here (a child would share its socket)."""
    if preload_app:
        from django.db import connections

        connections.close_all()


# Gunicorn 25+ opens a control socket at one path per user; two servers on one host would
# fight over it. Opt in with LMS_CONTROL_SOCKET=true where gunicornc is wanted.
control_socket_disable = os.environ.get("LMS_CONTROL_SOCKET", "").lower() not in {"1", "true"}
