"""Identifiers: time-ordered UUIDs (version 7, RFC 9562) for index locality."""

import os
import re
import time
import uuid

_MASK_48 = (1 << 48) - 1
_MASK_62 = (1 << 62) - 1


def uuid7() -> uuid.UUID:
    """A UUIDv7: 48 bits of Unix milliseconds, then version, 74 random bits and variant."""
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (millis & _MASK_48) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & _MASK_62
    return uuid.UUID(int=value)


_ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def parse_id(value: object) -> uuid.UUID | None:
    """The id a value spells: a UUID, or a UUID string in its hyphenated form in either case
    (ids are answered lower-case); None for anything else. The one parser of ids, for paths,
    bodies, query strings and commands; it never raises."""
    if isinstance(value, uuid.UUID):
        return value
    if isinstance(value, str) and _ID.fullmatch(value):
        return uuid.UUID(value)
    return None


class IdConverter:
    """The path converter of ``<id:name>``: any one path segment. A malformed id reaches the
    view as None, so the request is authenticated first (401 before 404, CONTRACT 1) and a
    malformed id is then an unknown record, with that record's 404 body."""

    regex = "[^/]+"

    def to_python(self, value: str) -> uuid.UUID | None:
        return parse_id(value)

    def to_url(self, value) -> str:
        return str(value)
