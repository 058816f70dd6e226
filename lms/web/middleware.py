"""Request ids, one JSON access line per request, and JSON for every error Django answers."""

from __future__ import annotations

import io
import logging
import time

from django.conf import settings
from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpRequest, HttpResponse

from lms import errors
from lms.ops import metrics
from lms.ops.logs import redact
from lms.web.http import client_address, is_text_encoding
from lms.web.request_id import bind, choose_request_id, unbind

access_logger = logging.getLogger("lms.access")

_BY_STATUS: dict[int, type[errors.ApiError]] = {
    400: errors.MalformedRequest,
    401: errors.Unauthenticated,
    403: errors.PermissionDenied,
    404: errors.NotFound,
    405: errors.MethodNotAllowed,
    411: errors.LengthRequired,
    413: errors.PayloadTooLarge,
    415: errors.UnsupportedMediaType,
    429: errors.Throttled,
    500: errors.InternalError,
    503: errors.ServiceUnavailable,
}
# Pages for people, not API clients: the admin keeps Django's HTML.
_HTML_PREFIXES = ("/admin/",)
_API_PREFIX = "/api/"


class RequestIdMiddleware:
    """Outermost: picks the request id, binds it for logs, echoes it as X-Request-ID."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = choose_request_id(request.META.get("HTTP_X_REQUEST_ID"))
        token = bind(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = request_id
            if settings.LMS_METRICS_TOKEN:
                metrics.count_request(request, response.status_code, time.perf_counter() - started)
            if access_logger.isEnabledFor(logging.INFO) and (
                settings.LMS_LOG_STATIC or not request.path_info.startswith(metrics.STATIC_PREFIX)
            ):
                _log_access(request, response, started)
            return response
        finally:
            unbind(token)


def _log_access(request: HttpRequest, response: HttpResponse, started: float) -> None:
    """The request's access line. The record is made and handed to the logger's handlers
    as ``Logger.info`` would, less its search of the stack for the caller (which no line
    shows): a large share of the log call's cost."""
    # Whatever answered (a view, a middleware, Django itself), the path is redacted.
    path = redact(request.path)
    method, status = request.method, response.status_code
    membership = getattr(request, "auth", None)  # an API token's membership
    org_id = getattr(membership, "org_id", None)
    extra = {
        "method": method,
        "path": path,
        "status": status,
        "durationMs": round((time.perf_counter() - started) * 1000, 2),
        "clientAddress": client_address(request),
        "orgId": None if org_id is None else str(org_id),
        "userAgent": request.META.get("HTTP_USER_AGENT"),
    }
    access_logger.handle(
        access_logger.makeRecord(
            access_logger.name, logging.INFO, __file__, 0, "%s %s %s", (method, path, status),
            None, extra=extra,
        )
    )  # fmt: skip


class JsonErrorMiddleware:
    """Every error answered outside the admin is the contract's JSON body.

    Rejects an over-size body before anything reads it, turns exceptions of non-DRF views
    into the body (503 when the database is unreachable), and rewrites any non-JSON error
    response that Django produced itself (unknown URL, DEBUG pages, CSRF, bad host).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refused = _refuse_body(request)
        if refused is not None:
            if _is_api(request):
                return errors.error_response(refused)
            return HttpResponse(refused.message, status=refused.status, content_type="text/plain")
        response = self.get_response(request)
        if (
            response.status_code >= 400
            and _is_api(request)
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            error_class = _BY_STATUS.get(response.status_code)
            if error_class is None:
                error = errors.ApiError(f"The request failed with status {response.status_code}.")
                error.status = response.status_code
                error.code = errors.HTTP_ERROR
            else:
                error = error_class()
            rewritten = errors.error_response(error)
            for header in ("Allow", "Retry-After", "WWW-Authenticate"):
                if header in response:
                    rewritten[header] = response[header]
            return rewritten
        return response

    def process_exception(self, request: HttpRequest, exception: Exception):
        # Classifying logs what is a 500 or a 503 (with its traceback and the request id),
        # in the admin too, whose page then stays Django's own.
        error, headers = errors.to_api_error(exception)
        if not _is_api(request):
            if isinstance(error, errors.ServiceUnavailable):
                # The database is down: staff, like API clients, get a 503 to retry, not a 500.
                response = HttpResponse(error.message, status=503, content_type="text/plain")
                response["Retry-After"] = error.retry_after
                return response
            return None
        return errors.error_response(error, **{k.replace("-", "_"): v for k, v in headers.items()})


# The charsets an API body may name (any case), as CONTRACT section 5 says: JSON is UTF-8,
# and US-ASCII is a subset of it.
_API_CHARSETS = frozenset({"utf-8", "us-ascii"})


def _refuse_body(request: HttpRequest) -> errors.ApiError | None:
    """Why the request's body cannot be read as sent, checked before anything reads it."""
    charset = request.content_params.get("charset") if request.content_params else None
    if charset is not None and charset.lower() not in _API_CHARSETS:
        if _is_api(request):
            return errors.UnsupportedMediaType(
                f"The charset {charset[:40]!r} is not accepted; send UTF-8."
            )
        if charset and not is_text_encoding(charset):  # the admin's forms: any text encoding
            return errors.UnsupportedMediaType(
                f"The charset {charset[:40]!r} is not a text encoding; send UTF-8."
            )
    meta = request.META
    if "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower() and not meta.get(
        "CONTENT_LENGTH"
    ):
        return _read_chunked(request)
    try:
        length = int(meta.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return errors.MalformedRequest("Invalid Content-Length.")
    if length < 0:
        return errors.MalformedRequest("Invalid Content-Length.")
    if length > settings.MAX_REQUEST_BODY_BYTES and _is_api(request):
        return errors.PayloadTooLarge()
    return None


def _read_chunked(request: HttpRequest) -> errors.ApiError | None:
    """A chunked body has no Content-Length, and Django reads such a body as empty. When the
    server has decoded the chunks and marks the stream's end (``wsgi.input_terminated``, as
    gunicorn does), the body is read here, within the size limit; else 411."""
    if not request.META.get("wsgi.input_terminated"):
        return errors.LengthRequired()
    limit = settings.MAX_REQUEST_BODY_BYTES
    body = request.META["wsgi.input"].read(limit + 1)
    if len(body) > limit:
        return errors.PayloadTooLarge()
    request.META["CONTENT_LENGTH"] = str(len(body))
    request._stream = LimitedStream(io.BytesIO(body), len(body))  # type: ignore[assignment]
    return None


def _is_api(request: HttpRequest) -> bool:
    return not request.path.startswith(_HTML_PREFIXES)


class _OutsideApi:
    """Mixed into a middleware of the admin's: it does nothing for requests under ``/api/``.
    The API takes no cookie session (a bearer token or nothing), so its requests skip the
    cost of sessions, users and messages. Subclasses, so that Django's admin checks still
    find them in ``MIDDLEWARE``, in their order. CSRF stays Django's own, for every request
    (``check --deploy`` looks for it by name; DRF's views are exempt from its check)."""

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith(_API_PREFIX):
            return self.get_response(request)  # type: ignore[attr-defined]
        return super().__call__(request)  # type: ignore[misc]


class SessionMiddleware(_OutsideApi, sessions.SessionMiddleware):
    pass


class AuthenticationMiddleware(_OutsideApi, auth.AuthenticationMiddleware):
    pass


class MessageMiddleware(_OutsideApi, messages.MessageMiddleware):
    pass
