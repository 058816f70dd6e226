"""Which renderer answers a request, and as which media type.

DRF's negotiation reads ``request.headers`` (every ``HTTP_*`` key of the request turned
into a header name) and parses each Accept token into a media type with its parameters, on
every request: a noticeable share of a small read (docs/performance.md), to find the same answer
for the same header. The answer depends only on the Accept header, the renderers offered
and a format override, so each process remembers it per (Accept header, renderer classes)
for requests without a format override. The memory is bounded (``lms.bounded``): past
``CACHE_SIZE`` distinct headers it forgets the older half, so a client sending a new header
with every request costs what DRF costs, and no more memory.
"""

from django.http import Http404
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation

from lms.bounded import BoundedCache

# Distinct (Accept header, renderers) pairs remembered per process; clients send a handful.
CACHE_SIZE = 256

# (Accept header, *renderer classes) -> (the renderer's position, the media type).
_chosen = BoundedCache(CACHE_SIZE)


class JsonFallbackNegotiation(DefaultContentNegotiation):
    """An Accept header we cannot satisfy still gets JSON rather than a 406."""

    def select_renderer(self, request, renderers, format_suffix=None):
        override = self.settings.URL_FORMAT_OVERRIDE
        # Without a query string there is no override to read (and no QueryDict to build).
        if format_suffix or (
            request.META.get("QUERY_STRING") and request.query_params.get(override)
        ):
            return self._select(request, renderers, format_suffix)
        key = (request.META.get("HTTP_ACCEPT"), *(type(renderer) for renderer in renderers))
        found = _chosen.get(key)
        if found is not None:
            return renderers[found[0]], found[1]
        renderer, media_type = self._select(request, renderers, None)
        _chosen.set(key, (renderers.index(renderer), media_type))
        return renderer, media_type

    def _select(self, request, renderers, format_suffix):
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except (NotAcceptable, Http404):
            return renderers[0], renderers[0].media_type
