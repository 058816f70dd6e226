"""The WSGI application gunicorn serves: what it changes in Django's per-request hooks."""

import pytest
from django.core.cache import close_caches
from django.core.signals import request_finished
from django.test import override_settings

from lms import wsgi


def _connected() -> bool:
    return any(ref() is close_caches for _, ref, _ in request_finished.receivers)


@pytest.fixture
def hooks():
    request_finished.connect(close_caches)  # as Django connects it
    yield
    request_finished.connect(close_caches)  # the rest of the session keeps Django's hook


NO_OP = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "shared": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "t"},
    "redis": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://x"},
}


def test_caches_that_close_nothing_are_not_closed_after_each_request(hooks):
    with override_settings(CACHES=NO_OP):
        wsgi._skip_closing_caches_that_close_nothing()
    assert not _connected()


def test_a_cache_with_its_own_close_is_still_closed_after_each_request(hooks):
    memcached = {"BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache"}
    with override_settings(CACHES={**NO_OP, "memcached": {**memcached, "LOCATION": "x:1"}}):
        wsgi._skip_closing_caches_that_close_nothing()
    assert _connected()
