from django.http import Http404
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation


class JsonFallbackNegotiation(DefaultContentNegotiation):
    """An Accept header we cannot satisfy still gets JSON rather than a 406."""

    def select_renderer(self, request, renderers, format_suffix=None):
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except (NotAcceptable, Http404):
            return renderers[0], renderers[0].media_type
