"""Reads of this app worth a name."""

from __future__ import annotations

from organizations.models import Invite, hash_token

# Real tokens are 47 characters; anything much longer is not worth hashing.
MAX_INVITE_TOKEN_LENGTH = 200


def invite_by_token(raw: str) -> Invite | None:
    """The invite a raw token opens, whatever its state, or None. One query at most."""
    if not raw or len(raw) > MAX_INVITE_TOKEN_LENGTH:
        return None
    try:
        token_hash = hash_token(raw)
    except UnicodeEncodeError:  # a lone surrogate cannot be any token we issued
        return None
    return (
        Invite.objects.filter(token_hash=token_hash)
        .only("email", "first_name", "last_name", "state", "expires_at")
        .first()
    )
