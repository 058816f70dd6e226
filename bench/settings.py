"""Our server in the load bench: the service's own settings, with bench/urls.py (the
production URLconf plus the textbook baseline's routes under /textbook/). Never used in
production.

``BENCH_DROP_MIDDLEWARE`` (class names, comma-separated) removes middleware, to measure
each one's share of a request (bench/instructions.py --set BENCH_DROP_MIDDLEWARE=...)."""

import os

from lms.settings import *  # noqa: F403
from lms.settings import MIDDLEWARE

ROOT_URLCONF = "bench.urls"
_DROPPED = set(filter(None, os.environ.get("BENCH_DROP_MIDDLEWARE", "").split(",")))
MIDDLEWARE = [name for name in MIDDLEWARE if name.rsplit(".", 1)[1] not in _DROPPED]
