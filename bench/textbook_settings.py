"""The textbook baseline's server (bench/textbook.py): the same settings and URLconf as
ours, but Django's default middleware (``startproject``'s: ours without our own, WhiteNoise
and axes), Django's default logging (no JSON access line) and persistent connections
(``CONN_MAX_AGE``) instead of the pool."""

import os

os.environ["LMS_DB_POOL"] = "false"

from bench.settings import *  # noqa: F403

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
LOGGING = {"version": 1, "disable_existing_loggers": False}
