"""The floors' server (bench/floors.py): the service's settings without any middleware, with
a URLconf of the two floor views only."""

from bench.settings import *  # noqa: F403

MIDDLEWARE: list[str] = []
ROOT_URLCONF = "bench.bare_urls"
LOGGING = {"version": 1, "disable_existing_loggers": False}
