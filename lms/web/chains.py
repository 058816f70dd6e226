"""Two middleware chains: a request under ``/api/`` passes only the middleware that acts on
it; every other request (the admin, static files, the probes) passes all of ``MIDDLEWARE``.

The middleware of the admin's pages (``LMS_OUTSIDE_API_MIDDLEWARE``: static files, cookie
sessions, CSRF, users, messages, the sign-in lockout) does nothing for the API, which takes
no cookie and answers no page, yet each layer of a chain costs a call and an exception guard
on every request (docs/performance.md, "The API's own middleware chain"). ``ApiChain`` is
mixed into a Django handler, the WSGI application's (lms.wsgi) and the test client's
(tests/helpers.py), so that the tests go the way production does. ``LMS_API_CHAIN=false``
sends every request through the whole chain.
"""

from __future__ import annotations

import threading

from django.conf import settings
from django.core.handlers.base import BaseHandler
from django.http import HttpRequest
from django.http.response import HttpResponseBase

API_PREFIX = "/api/"
_loading = threading.Lock()


def api_middleware() -> list[str]:
    """``MIDDLEWARE`` less the admin's own, in its order."""
    outside = set(settings.LMS_OUTSIDE_API_MIDDLEWARE)
    return [path for path in settings.MIDDLEWARE if path not in outside]


def api_handler(is_async: bool = False) -> BaseHandler:
    """A handler of its own for the API's requests: its chain, and its view and exception
    hooks, are those of ``api_middleware()``. Django's ``load_middleware`` reads
    ``settings.MIDDLEWARE`` as it builds the chain (docs/architecture.md, "Upgrading
    Django"), so the list is that one for the time of the build."""
    handler = BaseHandler()
    with _loading:
        full = settings.MIDDLEWARE
        settings.MIDDLEWARE = api_middleware()
        try:
            handler.load_middleware(is_async)
        finally:
            settings.MIDDLEWARE = full
    return handler


class ApiChain:
    """Mixed into a ``BaseHandler`` subclass before it: the API's requests go through
    ``api_handler()``'s chain, the others through the handler's own."""

    _api: BaseHandler | None = None

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async)  # type: ignore[misc]
        # Settings without the switch (the bench's bare Django) have one chain.
        chained = getattr(settings, "LMS_API_CHAIN", False)
        self._api = api_handler(is_async) if chained else None

    def get_response(self, request: HttpRequest) -> HttpResponseBase:
        if self._api is not None and request.path_info.startswith(API_PREFIX):
            return self._api.get_response(request)
        return super().get_response(request)  # type: ignore[misc]
