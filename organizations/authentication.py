"""``Authorization: Bearer <token>`` -> membership -> organization.

The lookup (one query with two joins) is about half the cost of a simple read, so each
process keeps what it found for ``settings.LMS_TOKEN_CACHE_SECONDS`` (default 1 s): the
membership with its organization and user, and the token's expiry. Expiry is checked against
the clock on every request, so it is exact. Anything else (a revocation, a deactivated user,
a changed role, a deleted membership) is seen by every process within that time, without a
signal between them; the process that revokes forgets the token at once.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS
from django.utils import timezone
from rest_framework import HTTP_HEADER_ENCODING
from rest_framework.authentication import BaseAuthentication

from lms.bounded import BoundedCache
from lms.errors import Unauthenticated
from organizations.models import ApiToken, Membership, hash_token

# Tokens remembered per process at most; beyond it the oldest half is dropped.
CACHE_SIZE = 10_000

# key hash -> (when it was looked up, on the monotonic clock; membership; expiry).
_cache = BoundedCache(CACHE_SIZE)


def forget_tokens(key_hashes=None) -> None:
    """Drop remembered tokens (all of them without ``key_hashes``) in this process."""
    if key_hashes is None:
        _cache.clear()
    else:
        for key_hash in key_hashes:
            _cache.pop(key_hash)


KEYWORD = b"bearer"


def bearer_token(request) -> str | None:
    """The raw token of ``Authorization: Bearer <token>``; None without the header, and
    Unauthenticated for a header of any other form."""
    # What DRF's get_authorization_header answers, read from META, not request.headers
    # (see lms.web.http).
    header = request.META.get("HTTP_AUTHORIZATION", b"")
    if isinstance(header, str):
        header = header.encode(HTTP_HEADER_ENCODING)
    header = header.split()
    if not header:
        return None
    if header[0].lower() != KEYWORD:
        raise Unauthenticated("Use the Authorization header as 'Bearer <token>'.")
    if len(header) != 2 or len(header[1]) > 200:
        raise Unauthenticated("Use the Authorization header as 'Bearer <token>'.")
    try:
        return header[1].decode("ascii")
    except UnicodeDecodeError:
        raise Unauthenticated("The token is not valid.") from None


class BearerTokenAuthentication(BaseAuthentication):
    """Sets ``request.user`` to the user and ``request.auth`` to the token's membership."""

    keyword = KEYWORD

    def authenticate(self, request):
        raw = bearer_token(request)
        return None if raw is None else self.authenticate_token(raw)

    def authenticate_token(self, raw: str) -> tuple:
        key_hash = hash_token(raw)
        ttl = settings.LMS_TOKEN_CACHE_SECONDS
        found = _cache.get(key_hash) if ttl > 0 else None
        if found is not None and time.monotonic() - found[0] < ttl:
            _, membership, expires_at = found
        else:
            # Stamped before the lookup reads: a revocation committed while it runs is seen
            # at most ``ttl`` after that commit, never ``ttl`` plus the lookup's own time.
            looked_up = time.monotonic()
            membership, expires_at = self._look_up(key_hash)
            if ttl > 0:
                _cache.set(key_hash, (looked_up, membership, expires_at))
        if expires_at is not None and expires_at <= timezone.now():
            raise Unauthenticated("The token has expired.")
        return membership.user, membership

    def _look_up(self, key_hash: str) -> tuple[Membership, object]:
        # On the primary, with a read replica too: a token works, and a revocation holds,
        # from the moment it is written.
        token = (
            ApiToken.all_orgs.using(DEFAULT_DB_ALIAS)
            .select_related("membership__org", "membership__user")
            .filter(key_hash=key_hash)
            .first()
        )
        if token is None:
            raise Unauthenticated("The token is not valid.")
        if token.revoked_at is not None:
            raise Unauthenticated("The token has been revoked.")
        membership: Membership = token.membership
        if not membership.user.is_active:
            raise Unauthenticated("The token's user is deactivated.")
        return membership, token.expires_at

    def authenticate_header(self, request) -> str:
        return "Bearer"
