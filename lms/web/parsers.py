"""Request bodies are JSON objects of at most 1 MiB; anything else is refused clearly.

What is refused here is refused before anything is stored:

- text that is not JSON, or a JSON value other than an object (400 ``malformed_request``);
- numbers JSON cannot carry back out: ``NaN``, ``Infinity`` and literals such as ``1e999``
  that overflow to infinity (400), so that nothing stored is ever non-JSON;
- nesting deeper than ``MAX_JSON_DEPTH`` arrays and objects (400, ``lms.json_depth``), so
  that every stored document can be rendered again by the API, the admin and the database;
- a charset other than UTF-8 or US-ASCII is answered 415 by the middleware, before a parser
  reads the body.
"""

from __future__ import annotations

import json
import math

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from lms.errors import PayloadTooLarge
from lms.json_depth import MAX_JSON_DEPTH, nested_too_deep


class JsonObjectParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.MAX_REQUEST_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge()
        if not raw.strip():
            return {}
        encoding = (parser_context or {}).get("encoding") or settings.DEFAULT_CHARSET
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise ParseError(f"The request body is not valid {encoding} text.") from exc
        return parse_json_object(text)


def parse_json_object(text: str) -> dict:
    """``text`` as a JSON object within the limits above; ``ParseError`` otherwise."""
    if nested_too_deep(text):
        raise ParseError(f"The request body is nested deeper than {MAX_JSON_DEPTH} levels.")
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError as exc:  # pragma: no cover - the depth check comes first
        raise ParseError(
            f"The request body is nested deeper than {MAX_JSON_DEPTH} levels."
        ) from exc
    except ValueError as exc:
        raise ParseError(f"The request body is not valid JSON: {_reason(exc)}") from exc
    if not isinstance(data, dict):
        raise ParseError("The request body must be a JSON object.")
    return data


def _finite_float(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        raise ValueError(f"{literal} is out of the range of a JSON number")
    return number


def _refuse_constant(name: str):
    # NaN and Infinity are not JSON.
    raise ValueError(f"{name} is not valid JSON")


def _reason(exc: ValueError) -> str:
    return str(exc).split(":")[0] + "."
