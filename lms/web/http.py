"""The request class the WSGI application builds.

Hot paths read a request header from ``request.META`` (``HTTP_`` and the name in capitals,
``-`` as ``_``), not from ``request.headers``: the first read of ``request.headers`` turns
every ``HTTP_*`` key of the request into a header name, a cost out of proportion for a read
that needs one header (docs/performance.md).
"""

from __future__ import annotations

import codecs
import functools

from django.core.handlers.wsgi import WSGIRequest
from django.utils.http import parse_header_parameters
from rest_framework.settings import api_settings


def client_address(request) -> str:
    """The client's address: ``REMOTE_ADDR``, or behind ``LMS_NUM_PROXIES`` trusted proxies
    the address the nearest of them saw in ``X-Forwarded-For`` (anyone can send the header,
    so it is believed only as far as the proxies are trusted)."""
    address = request.META.get("REMOTE_ADDR") or ""
    num_proxies = api_settings.NUM_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if num_proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",")]
        address = hops[-min(num_proxies, len(hops))]
    return address


@functools.lru_cache(maxsize=64)
def is_text_encoding(name: str) -> bool:
    """Whether ``name`` is a codec that turns bytes into text (``rot13``, ``base64`` and
    unknown names are not)."""
    try:
        return codecs.lookup(name)._is_text_encoding
    except LookupError:
        return False


class Request(WSGIRequest):
    """Django's request, except that a ``charset`` that is not a text encoding is not taken
    as the request's encoding: Django would take ``rot13`` and fail with ``LookupError`` as it
    builds the request, before any middleware could answer. The charset stays in
    ``content_params``, and ``JsonErrorMiddleware`` answers 415."""

    def _set_content_type_params(self, meta):
        self.content_type, self.content_params = parse_header_parameters(
            meta.get("CONTENT_TYPE", "")
        )
        charset = self.content_params.get("charset")
        if charset and is_text_encoding(charset):
            self.encoding = charset
