"""``Authorization: Bearer <token>`` -> membership -> organization, in one query."""

from __future__ import annotations

from django.utils import timezone
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from lms.errors import Unauthenticated
from organizations.models import ApiToken, Membership, hash_token


class BearerTokenAuthentication(BaseAuthentication):
    """Sets ``request.user`` to the user and ``request.auth`` to the token's membership."""

    keyword = b"bearer"

    def authenticate(self, request):
        header = get_authorization_header(request).split()
        if not header:
            return None
        if header[0].lower() != self.keyword:
            raise Unauthenticated("Use the Authorization header as 'Bearer <token>'.")
        if len(header) != 2 or len(header[1]) > 200:
            raise Unauthenticated("Use the Authorization header as 'Bearer <token>'.")
        try:
            raw = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise Unauthenticated("The token is not valid.") from None
        return self.authenticate_token(raw)

    def authenticate_token(self, raw: str) -> tuple:
        token = (
            ApiToken.all_orgs.select_related("membership__org", "membership__user")
            .filter(key_hash=hash_token(raw))
            .first()
        )
        if token is None:
            raise Unauthenticated("The token is not valid.")
        if token.revoked_at is not None:
            raise Unauthenticated("The token has been revoked.")
        if token.expires_at is not None and token.expires_at <= timezone.now():
            raise Unauthenticated("The token has expired.")
        membership: Membership = token.membership
        if not membership.user.is_active:
            raise Unauthenticated("The token's user is deactivated.")
        return membership.user, membership

    def authenticate_header(self, request) -> str:
        return "Bearer"
