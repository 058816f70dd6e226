"""The HTTP edge and the response machinery.

The request (``http``), its id (``request_id``), body parsing (``parsers``), content
negotiation (``negotiation``), CORS (``cors``), the middleware that answers every failure
with the contract's body (``middleware``), and the bodies themselves: the renderer and
``rendered`` (``renderers``), and the wire shapes whose builders come from their
serializers (``shapes``).
"""
