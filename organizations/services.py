"""Writes of identity and tenancy."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from organizations.models import (
    ApiToken,
    Membership,
    Organization,
    User,
    hash_token,
    new_raw_token,
)


@transaction.atomic
def add_member(
    *, org: Organization, email: str, role: str, first_name: str = "", last_name: str = ""
) -> Membership:
    """The user's membership of ``org`` with ``role``, creating the user if needed."""
    email = User.objects.normalize_email(email).lower()
    user, created = User.objects.get_or_create(
        email=email, defaults={"first_name": first_name, "last_name": last_name}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    membership, _ = Membership.objects.update_or_create(org=org, user=user, defaults={"role": role})
    return membership


@transaction.atomic
def create_api_token(
    *,
    membership: Membership,
    name: str = "",
    expires_at: datetime | None = None,
    instance: ApiToken | None = None,
) -> tuple[ApiToken, str]:
    """A new token for the membership (saved into ``instance`` when the admin passes its
    unsaved object). The raw token is returned here and never again: only its hash is kept."""
    raw = new_raw_token()
    token = instance or ApiToken()
    token.org_id = membership.org_id
    token.membership = membership
    token.name = name
    token.prefix = raw[:12]
    token.key_hash = hash_token(raw)
    token.expires_at = expires_at
    token.save()
    return token, raw


def revoke_tokens(queryset) -> int:
    return queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
