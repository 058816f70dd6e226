"""Production server settings: `gunicorn -c gunicorn.conf.py lms.wsgi`. Sized from the CPUs."""

import multiprocessing
import os

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
# Gunicorn 25+ opens a control socket at one path per user; two servers on one host would
# fight over it. Opt in with LMS_CONTROL_SOCKET=true where gunicornc is wanted.
control_socket_disable = os.environ.get("LMS_CONTROL_SOCKET", "").lower() not in {"1", "true"}
