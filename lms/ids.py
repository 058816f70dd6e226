"""Identifiers: time-ordered UUIDs (version 7, RFC 9562) for index locality."""

import os
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


def parse_uuid(value: object) -> uuid.UUID | None:
    """The UUID a string spells, or None for anything else (never raises)."""
    if isinstance(value, uuid.UUID):
        return value
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        return None
