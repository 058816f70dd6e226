"""The service's own settings plus one bench-only route (see bench/urls.py); used only by
bench/load.py, never in production."""

from lms.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
