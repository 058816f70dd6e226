"""JSON bodies rendered by orjson: the same compact UTF-8 text as DRF's ``JSONRenderer``
(``COMPACT_JSON``, ``UNICODE_JSON``), in C instead of ``json.dumps`` with a Python encoder.

A value orjson does not know natively (a ``Decimal``, a lazy translation, ...) goes through
DRF's own encoder, so every body reads as DRF would write it. What orjson refuses (an
integer beyond 64 bits in a stored JSON document, say) and an indented body
(``Accept: application/json; indent=4``) are rendered by DRF's renderer unchanged.
"""

from __future__ import annotations

import orjson
from django.http import HttpResponse
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder

_default = JSONEncoder().default
_LS, _PS = "\u2028".encode(), "\u2029".encode()


class OrjsonRenderer(JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if self.get_indent(accepted_media_type or "", renderer_context or {}):
            return super().render(data, accepted_media_type, renderer_context)
        try:
            body = orjson.dumps(data, default=_default, option=orjson.OPT_NON_STR_KEYS)
        except orjson.JSONEncodeError:
            return super().render(data, accepted_media_type, renderer_context)
        # As DRF does: the two line separators JavaScript does not allow in a string.
        if _LS in body or _PS in body:
            body = body.replace(_LS, b"\\u2028").replace(_PS, b"\\u2029")
        return body


def rendered(request, data, status: int = 200) -> HttpResponse:
    """What ``Response(data, status=status)`` answers once DRF has rendered it, rendered at
    once: the renderer negotiated for ``request`` writes the body (as DRF's
    ``Response.rendered_content`` calls it) and a plain ``HttpResponse`` carries it.

    DRF's ``Response`` is a template response: the handler renders it after the view, its
    content is set twice and its charset looked up in the settings each time, a noticeable
    share of a small read (docs/performance.md). The views that answer a body use this
    instead; what DRF adds in ``finalize_response`` (``Allow``, ``Vary``) it adds to any
    response."""
    renderer = request.accepted_renderer
    content_type = renderer.media_type
    if renderer.charset is not None:
        content_type = f"{content_type}; charset={renderer.charset}"
    body = renderer.render(data, request.accepted_media_type, {"request": request})
    if isinstance(body, str):
        body = body.encode(renderer.charset)
    response = HttpResponse(body, status=status, content_type=content_type)
    if not body:
        del response["Content-Type"]
    return response
