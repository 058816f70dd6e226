"""Request bodies are JSON objects of at most 1 MiB; anything else is refused clearly."""

import json

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from lms.errors import PayloadTooLarge


class JsonObjectParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.MAX_REQUEST_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge()
        if not raw.strip():
            return {}
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            data = json.loads(raw.decode(encoding), parse_constant=_refuse_constant)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError("The request body is not valid JSON.") from exc
        if not isinstance(data, dict):
            raise ParseError("The request body must be a JSON object.")
        return data


def _refuse_constant(name: str):
    # NaN and Infinity are not JSON.
    raise ValueError(f"{name} is not valid JSON")
