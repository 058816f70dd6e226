"""The textbook baseline's server (bench/textbook.py): the same settings and URLconf as
ours, but Django's default middleware (``startproject``'s: ours without our own, WhiteNoise
and axes), Django's default logging (no JSON access line) and persistent connections
(``CONN_MAX_AGE``) instead of the pool."""

import os

os.environ["LMS_DB_POOL"] = "false"

from bench.settings import *  # noqa: F403
from bench.settings import MIDDLEWARE

MIDDLEWARE = [name for name in MIDDLEWARE if name.startswith("django.")]
LOGGING = {"version": 1, "disable_existing_loggers": False}
