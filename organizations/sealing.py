"""Sealing a secret that must wait somewhere (a stored answer, a queued task) without that
place ever holding it usable: XOR with a pad that only the server's SECRET_KEY and the
material given can make."""

from __future__ import annotations

import hashlib

from django.utils.crypto import salted_hmac


def xor_pad(data: bytes, salt: str, material: bytes) -> bytes:
    """``data`` XOR a pad: SHAKE-256 of an HMAC (with SECRET_KEY) of ``material``. The
    material must differ for every secret sealed, so that a pad is never used twice."""
    pad = hashlib.shake_256(salted_hmac(salt, material).digest()).digest(len(data))
    return bytes(a ^ b for a, b in zip(data, pad, strict=True))


def seal(secret: str, salt: str, material: bytes) -> str:
    return xor_pad(secret.encode(), salt, material).hex()


def unseal(sealed: object, salt: str, material: bytes, *, prefix: str) -> str | None:
    """The secret ``seal`` sealed, when it opens to printable text starting with ``prefix``;
    None otherwise (SECRET_KEY changed meanwhile, or not a sealed value)."""
    try:
        secret = xor_pad(bytes.fromhex(sealed), salt, material).decode("ascii")  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return secret if secret.startswith(prefix) and secret.isprintable() else None
