"""Invites as a client holds them: the invite and its raw token (only the service has it)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from organizations.models import Invite, Organization
from organizations.services import create_invite


def make_invite(org: Organization, status: str = "pending", **kwargs) -> tuple[Invite, str]:
    """An invite in ``status`` (pending, expired, accepted or revoked) and its raw token."""
    kwargs.setdefault("email", "grace.hopper@example.com")
    kwargs.setdefault("first_name", "Grace")
    kwargs.setdefault("last_name", "Hopper")
    invite, raw = create_invite(org=org, **kwargs)
    if status == "expired":
        invite.expires_at = timezone.now() - timedelta(seconds=1)
    elif status in (Invite.State.ACCEPTED, Invite.State.REVOKED):
        invite.state = status
    elif status != "pending":
        raise ValueError(status)
    invite.save()
    return invite, raw
