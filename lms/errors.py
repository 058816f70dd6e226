"""The exception hierarchy and the one place errors are shaped into the contract's body.

In app code, just raise: ``raise NotFound("No download with that id.")``. A domain rule that
a value breaks is Django's ``ValidationError`` keyed by Python field names; ``WIRE_NAMES`` is
the one table that names them as the wire does. Whatever is raised, by us, DRF or Django,
leaves the service as ``{error, message, requestId[, details]}``.
"""

from __future__ import annotations

import logging
import math
import re
from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS, RequestDataTooBig
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from rest_framework import exceptions as drf

from lms.web.request_id import current_request_id

logger = logging.getLogger("lms.errors")


# The code of an error status Django answered that no class below names (the JSON error
# middleware's fallback).
HTTP_ERROR = "http_error"


def codes() -> list[str]:
    """Every code an error body's ``error`` may hold: each ``ApiError`` subclass's, the
    apps' included (imported by then), and ``HTTP_ERROR``; the schema's enum of them."""
    found, pending = {HTTP_ERROR}, list(ApiError.__subclasses__())
    while pending:
        cls = pending.pop()
        found.add(cls.code)
        pending.extend(cls.__subclasses__())
    return sorted(found)


class ApiError(Exception):
    status = 400
    code = "bad_request"
    default_message = "The request could not be processed."

    def __init__(self, message: str | None = None, *, details: dict | None = None):
        self.message = message or self.default_message
        self.details = details
        super().__init__(self.message)


class ValidationFailed(ApiError):
    status, code = 400, "validation_error"
    default_message = "The request is not valid."


class MalformedRequest(ApiError):
    status, code = 400, "malformed_request"
    default_message = "The request body must be a JSON object."


class Unauthenticated(ApiError):
    status, code = 401, "unauthenticated"
    default_message = "A valid bearer token is required."


class PermissionDenied(ApiError):
    status, code = 403, "permission_denied"
    default_message = "Your role may not do this."


class NotFound(ApiError):
    status, code = 404, "not_found"
    default_message = "Not found."


class MethodNotAllowed(ApiError):
    status, code = 405, "method_not_allowed"
    default_message = "This method is not allowed here."


class Conflict(ApiError):
    status, code = 409, "conflict"
    default_message = "The request conflicts with the current state."


class Gone(ApiError):
    status, code = 410, "gone"
    default_message = "This is no longer available."


class LengthRequired(ApiError):
    status, code = 411, "length_required"
    default_message = "A request body needs a Content-Length (or a server that reads chunks)."


class PayloadTooLarge(ApiError):
    status, code = 413, "payload_too_large"
    default_message = "The request body is larger than 1 MiB."


class UnsupportedMediaType(ApiError):
    status, code = 415, "unsupported_media_type"
    default_message = "The request body must be application/json."


class Throttled(ApiError):
    status, code = 429, "throttled"
    default_message = "Too many requests; retry later."

    def __init__(self, message: str | None = None, *, wait: float | None = None):
        """``wait``: the seconds until a request may go through (``Retry-After``)."""
        self.wait = None if wait is None else max(1, math.ceil(wait))
        if message is None and self.wait is not None:
            message = f"Too many requests; retry in {self.wait} seconds."
        super().__init__(message)


class InternalError(ApiError):
    status, code = 500, "internal_error"
    default_message = "An unexpected error occurred; it has been logged."


class ServiceUnavailable(ApiError):
    status, code = 503, "service_unavailable"
    default_message = "The service is temporarily unavailable; retry later."
    # Every 503 says when to try again (CONTRACT 7.0): a database restarting is back in
    # seconds, and a client or load balancer that waits this long does not pile on.
    retry_after = "5"


# Codes whose body carries ``details``: a validation_error's offending fields, and a
# conflict's field whose value is taken (an automation's ``name``, CONTRACT 7.1).
_CODES_WITH_DETAILS = frozenset({"validation_error", "conflict"})
# A lone surrogate cannot be written as UTF-8: a JSON body that holds one cannot be rendered.
_SURROGATE = re.compile("[\ud800-\udfff]")


def client_text(text: str) -> str:
    """``text`` as an error body may carry it: a lone surrogate (which a client can send as
    a ``\\ud800`` escape, in a key or a value that a message or ``details`` echoes) written
    as that escape, as ``repr`` does, so every error renders as UTF-8 JSON."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _client_details(details: Any) -> Any:
    if isinstance(details, dict):
        return {client_text(str(key)): _client_details(value) for key, value in details.items()}
    if isinstance(details, list | tuple):
        return [_client_details(item) for item in details]
    return client_text(details) if isinstance(details, str) else details


def error_body(
    code: str, message: str, details: dict | None = None, request_id: str | None = None
) -> dict[str, Any]:
    """The contract's error body. Every error passes here, so this is where text that came
    from the client (a key, a value quoted in a message) is made safe to render."""
    body: dict[str, Any] = {
        "error": code,
        "message": client_text(str(message)),
        "requestId": request_id or current_request_id() or "",
    }
    if details is not None and code in _CODES_WITH_DETAILS:
        body["details"] = _client_details(details)
    return body


def error_response(error: ApiError, **headers: str) -> JsonResponse:
    response = JsonResponse(
        error_body(error.code, error.message, error.details), status=error.status
    )
    if isinstance(error, ServiceUnavailable):
        response["Retry-After"] = error.retry_after
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response


def flatten_details(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail as {wire path: [messages]}; list items become ``field.N``."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            out.update(flatten_details(value, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            if detail:
                out[prefix or "nonFieldErrors"] = [str(item) for item in detail]
        else:
            for index, item in enumerate(detail):
                if item:
                    out.update(flatten_details(item, f"{prefix}.{index}" if prefix else str(index)))
    else:
        out[prefix or "nonFieldErrors"] = [str(detail)]
    return out


def validation_message(details: dict[str, list[str]]) -> str:
    if not details:
        return ValidationFailed.default_message
    field, messages = next(iter(details.items()))
    if field == "nonFieldErrors":
        return messages[0]
    return f"Invalid {field}: {messages[0]}"


# The wire's name of each Python field name a domain ``ValidationError`` can carry (services,
# models' ``clean``): the one place the two vocabularies meet. A key not listed is answered as
# it is: a name both share (``order``, ``name``) or a path into a JSON document the client
# sent (``actions.0.input.url``), whose first part is looked up here.
WIRE_NAMES = {
    NON_FIELD_ERRORS: "nonFieldErrors",
    "display_names": "displayNames",
    "course_id": "courseId",
    "first_name": "firstName",
    "last_name": "lastName",
    "expires_at": "expiresAt",
    "invited_by": "invitedBy",
}


def wire_details(error: DjangoValidationError) -> dict[str, list[str]]:
    """A domain ``ValidationError``'s messages by wire name (``WIRE_NAMES``)."""
    if not hasattr(error, "error_dict"):
        return {WIRE_NAMES[NON_FIELD_ERRORS]: list(error.messages)}
    details: dict[str, list[str]] = {}
    for field, messages in error.message_dict.items():
        head, dot, rest = field.partition(".")
        details[f"{WIRE_NAMES.get(head, head)}{dot}{rest}"] = list(messages)
    return details


def validation_error(details: dict[str, list[str]], message: str | None = None) -> ValidationFailed:
    """The one way to build a 400 ``validation_error`` by hand, details keyed by wire name."""
    return ValidationFailed(message or validation_message(details), details=details)


def to_api_error(exc: BaseException) -> tuple[ApiError, dict[str, str]]:
    """Map any exception to (ApiError, extra headers). Unknown exceptions become 500."""
    headers: dict[str, str] = {}
    if isinstance(exc, ApiError):
        error = exc
        if isinstance(exc, Unauthenticated):
            headers["WWW-Authenticate"] = "Bearer"
        if isinstance(exc, Throttled) and exc.wait is not None:
            headers["Retry-After"] = str(exc.wait)
    elif isinstance(exc, drf.ValidationError):
        details = flatten_details(exc.detail)
        error = validation_error(details)
    elif isinstance(exc, DjangoValidationError):
        error = validation_error(wire_details(exc))
    elif isinstance(exc, drf.ParseError):
        error = MalformedRequest(_detail_text(exc) or MalformedRequest.default_message)
    elif isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        error = Unauthenticated(_detail_text(exc))
        headers["WWW-Authenticate"] = "Bearer"
    elif isinstance(exc, drf.PermissionDenied | DjangoPermissionDenied):
        error = PermissionDenied()
    elif isinstance(exc, drf.NotFound | Http404):
        error = NotFound()
    elif isinstance(exc, drf.MethodNotAllowed):
        error = MethodNotAllowed(_detail_text(exc))
    elif isinstance(exc, drf.UnsupportedMediaType):
        error = UnsupportedMediaType()
    elif isinstance(exc, drf.Throttled):
        error = Throttled(wait=exc.wait or 1)  # type: ignore[attr-defined]
        headers["Retry-After"] = str(error.wait)
    elif isinstance(exc, RequestDataTooBig):
        error = PayloadTooLarge()
    elif isinstance(exc, OperationalError | InterfaceError):
        logger.error("database unavailable", exc_info=exc)
        error = ServiceUnavailable()
        headers["Retry-After"] = error.retry_after
    elif isinstance(exc, drf.APIException):
        error = ApiError(_detail_text(exc))
        error.status, error.code = exc.status_code, str(exc.default_code)
    else:
        if isinstance(exc, DatabaseError):
            logger.error("database error", exc_info=exc)
        else:
            logger.error("unhandled exception", exc_info=exc)
        error = InternalError()
    return error, headers


def _detail_text(exc: drf.APIException) -> str:
    detail = exc.detail
    if isinstance(detail, list | dict):
        flat = flatten_details(detail)
        return validation_message(flat)
    return str(detail)


def api_exception_handler(exc: Exception, context: dict):
    """DRF's EXCEPTION_HANDLER: every exception a view raises gets the contract's body."""
    from rest_framework.response import Response
    from rest_framework.views import set_rollback

    set_rollback()
    error, headers = to_api_error(exc)
    return Response(
        error_body(error.code, error.message, error.details), status=error.status, headers=headers
    )


# --- Django's own error views (what never reaches DRF) ------------------------------------


def not_found_view(request, exception=None):
    return error_response(NotFound("No such route."))


def server_error_view(request):
    return error_response(InternalError())


def bad_request_view(request, exception=None):
    return error_response(MalformedRequest("The request could not be understood."))


def permission_denied_view(request, exception=None):
    return error_response(PermissionDenied())
