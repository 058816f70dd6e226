"""The id of the request being served, for error bodies and log lines."""

import re
import secrets
from contextvars import ContextVar

_request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
_SANE = re.compile(r"[A-Za-z0-9._-]{1,128}")


def current_request_id() -> str | None:
    return _request_id.get()


def choose_request_id(incoming: str | None) -> str:
    """A sane incoming id is reused (1-128 of [A-Za-z0-9._-]); otherwise a fresh one: 32
    hex digits of 128 random bits (a UUID's ``.hex`` costs five times as much, to build an
    object no one reads)."""
    if incoming and _SANE.fullmatch(incoming):
        return incoming
    return secrets.token_hex(16)


def bind(request_id: str):
    return _request_id.set(request_id)


def unbind(token) -> None:
    _request_id.reset(token)
