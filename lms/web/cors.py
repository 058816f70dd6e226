"""Browsers on other origins (CONTRACT 8.6): django-cors-headers, for the API only.

The origins come from ``LMS_CORS_ORIGINS`` (``CORS_ALLOWED_ORIGINS``, lms/settings.py); the
token is the credential, so no cookie is ever allowed across origins. The middleware sits
right inside the request id's, before anything that authenticates or refuses a request, so
that a preflight needs no token and every answer to a listed origin, an error included,
carries the CORS headers the page needs to read it.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from corsheaders import middleware as cors
from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.cache import patch_vary_headers

# The paths that answer CORS, as CORS_URLS_REGEX (lms/settings.py) says: the API's.
_API_PREFIX = "/api/"


class CorsMiddleware(cors.CorsMiddleware):
    """django-cors-headers, whose preflight answer (``200``, no body) is given only to an
    origin that is listed. Any other ``OPTIONS`` (no ``Origin``, or one not listed) goes on
    to the view like any request: ``401`` without a token, and no CORS header, so a browser
    on that origin gets nothing it may read.

    A request it has nothing to do for costs it next to nothing: with no origin listed (the
    default), or outside the API, it passes the request on; a request without ``Origin`` (no
    browser on another origin sent it) only gets ``Vary: origin``, which the library would
    add through ``patch_vary_headers`` after reading its settings and matching the path
    again (several times the cost)."""

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if not settings.CORS_ALLOWED_ORIGINS or not request.path_info.startswith(_API_PREFIX):
            return self.get_response(request)  # type: ignore[return-value]
        if "HTTP_ORIGIN" not in request.META:
            response = self.get_response(request)
            if response.has_header("Vary"):  # type: ignore[union-attr]
                patch_vary_headers(response, ("origin",))  # type: ignore[arg-type]
            else:
                response.headers["Vary"] = "origin"  # type: ignore[union-attr]
            return response  # type: ignore[return-value]
        return super().__call__(request)  # type: ignore[return-value]

    def check_preflight(self, request: HttpRequest) -> HttpResponseBase | None:
        response = super().check_preflight(request)
        if response is not None and not self._listed(request.headers.get("origin")):
            return None
        return response

    def origin_found_in_white_lists(self, origin: str, url) -> bool:
        """The ``Origin`` exactly as listed (CONTRACT 8.6): a browser sends the serialized
        origin, scheme, host and port and nothing after them, so anything else (a path, a
        trailing slash, a query, a fragment, an upper-case scheme) is no listed origin. The
        library compared the parsed scheme and host, and so echoed all of those."""
        return origin in settings.CORS_ALLOWED_ORIGINS

    def _listed(self, origin: str | None) -> bool:
        if not origin:
            return False
        try:
            url = urlsplit(origin)
        except ValueError:
            return False
        return bool(cors.conf.CORS_ALLOW_ALL_ORIGINS) or self.origin_found_in_white_lists(
            origin, url
        )
