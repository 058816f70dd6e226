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


# The salt of an invite accept's remembered token; a fixed string (its old store's name), so
# that an answer sealed before a release opens after it.
_ACCEPT_SALT = "organizations.InviteReplay"


def _accept_material(raw_invite_token: str, key: str) -> bytes:
    """What seals an invite accept's remembered token: only the holder of the invite's raw
    token and the Idempotency-Key can make it. Each invite seals one answer, so a pad is
    never used twice."""
    return raw_invite_token.encode() + b"\0" + key.encode("utf-8", "surrogatepass")


def seal_accepted_token(token: str, raw_invite_token: str, key: str) -> str:
    return seal(token, _ACCEPT_SALT, _accept_material(raw_invite_token, key))


def open_accepted_token(sealed: object, raw_invite_token: str, key: str) -> str | None:
    """The API token ``seal_accepted_token`` sealed; None when it does not open (SECRET_KEY
    changed meanwhile)."""
    return unseal(sealed, _ACCEPT_SALT, _accept_material(raw_invite_token, key), prefix="lms_")
