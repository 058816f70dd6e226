"""The WSGI application (gunicorn's ``lms.wsgi:application``)."""

import os

import django
from django.conf import settings
from django.core.cache import close_caches
from django.core.cache.backends.base import BaseCache
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished
from django.urls import get_resolver
from django.utils.module_loading import import_string

from lms.web.chains import ApiChain
from lms.web.http import Request

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lms.settings")


class Handler(ApiChain, WSGIHandler):
    request_class = Request


def _skip_closing_caches_that_close_nothing() -> None:
    """Django closes every cache it has opened after each request (``close_caches`` on
    ``request_finished``). With every configured backend's ``close`` the no-op of
    ``BaseCache`` (local memory, the database and Redis: Django's Redis client keeps its
    pool), that costs a walk over the caches of the thread on every request and does nothing
    else. A backend with a ``close`` of its own (memcached) keeps it."""
    backends = [import_string(cache["BACKEND"]) for cache in settings.CACHES.values()]
    if all(backend.close is BaseCache.close for backend in backends):
        request_finished.disconnect(close_caches)


def get_application() -> Handler:
    django.setup(set_prefix=False)
    _skip_closing_caches_that_close_nothing()
    handler = Handler()
    # The URLconf and every view it names are imported now, not by the first request: in
    # gunicorn's master (preload_app), so that each forked worker starts with them.
    get_resolver().url_patterns  # noqa: B018
    return handler


application = get_application()
