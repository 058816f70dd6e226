"""One JSON object a line, each carrying the request id of the request that wrote it, with
every registered secret redacted, whoever wrote the line."""

import json
import logging
import math
import re
import time

import orjson

from lms.web.request_id import current_request_id

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "request_id",
}


_redactions: list[tuple[str, re.Pattern, str]] = []


def register_redaction(pattern: str, replacement: str, *, contains: str) -> None:
    """Redact what ``pattern`` matches in every log line (an app registers the secrets its
    URLs carry from its ``AppConfig.ready``). ``contains`` is a literal every match holds:
    a line without it is not scanned (a substring test costs a fraction of the pattern's
    scan, which every request's access line went through)."""
    compiled = re.compile(pattern)
    if not contains or contains not in pattern:
        raise ValueError(f"{contains!r} is not a literal of the pattern {pattern!r}.")
    entry = (contains, compiled, replacement)
    if entry not in _redactions:
        _redactions.append(entry)


def redact(text: str) -> str:
    for contains, pattern, replacement in _redactions:
        if contains in text:
            text = pattern.sub(replacement, text)
    return text


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", None):
            record.request_id = current_request_id()
        return True


_stamped: tuple[int | None, str] = (None, "")  # the last whole second written, and its text


def _timestamp(created: float) -> str:
    """``2026-11-24T02:30:05.123456Z`` (UTC, always six digits of microseconds, rounded as
    ``datetime`` rounds). The text of the second is written once a second, not per line."""
    global _stamped
    fraction, whole = math.modf(created)
    second, micro = int(whole), round(fraction * 1_000_000)
    if micro == 1_000_000:
        second, micro = second + 1, 0
    stamped = _stamped  # read once: another thread may swap the tuple meanwhile
    if stamped[0] != second:
        stamped = _stamped = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    return f"{stamped[1]}.{micro:06d}Z"


class JsonFormatter(logging.Formatter):
    """The line is written by orjson (UTF-8 as it is, no spaces between items); what
    orjson refuses (an integer beyond 64 bits in an extra field) goes through ``json``."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": _timestamp(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "requestId": getattr(record, "request_id", None),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        # The whole line: a secret may sit in the message, in an extra field (Django's
        # DisallowedHost line carries the request) or in a traceback.
        try:
            line = orjson.dumps(entry, default=str).decode()
        except orjson.JSONEncodeError:
            line = json.dumps(entry, default=str)
        return redact(line)


def _install_record_factory() -> None:
    """Stamp every log record with the request id when it is created, whatever handler
    (console, test capture, a library's own) formats it later."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "_lms_request_id", False):
        return

    def factory(*args, **kwargs):
        record = previous(*args, **kwargs)
        record.request_id = current_request_id()
        return record

    factory._lms_request_id = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


_install_record_factory()
