"""The floors' server (bench/floors.py): bare Django, no app, no middleware, Django's own
logging, a URLconf of the floor views only. The database's settings are the service's
(``DATABASE_URL``), read by the floors' raw connection; Django's never connects."""

import os

import dj_database_url

SECRET_KEY = "bench-floors-not-a-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "bench.bare_urls"
DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"])}
USE_TZ = True
