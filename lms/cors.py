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
from django.http import HttpRequest
from django.http.response import HttpResponseBase


class CorsMiddleware(cors.CorsMiddleware):
    """django-cors-headers, whose preflight answer (``200``, no body) is given only to an
    origin that is listed. Any other ``OPTIONS`` (no ``Origin``, or one not listed) goes on
    to the view like any request: ``401`` without a token, and no CORS header, so a browser
    on that origin gets nothing it may read."""

    def check_preflight(self, request: HttpRequest) -> HttpResponseBase | None:
        response = super().check_preflight(request)
        if response is not None and not self._listed(request.headers.get("origin")):
            return None
        return response

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
