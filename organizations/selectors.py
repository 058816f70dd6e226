"""Reads of this app worth a name."""

from __future__ import annotations

from django.db.models import F, Prefetch, QuerySet, prefetch_related_objects
from django.utils import timezone

from lms.db.collation import CodePointOrder
from lms.errors import NotFound
from lms.ids import parse_id
from organizations.errors import InviteUnavailable
from organizations.models import Invite, InviteCourse, Membership, Organization, hash_token

# Real tokens are 47 characters; anything much longer is not worth hashing.
MAX_INVITE_TOKEN_LENGTH = 200


def administered_orgs(user) -> dict:
    """The organizations ``user`` administers in the admin, with their role there: those
    where they are an owner or admin member (settings.LMS_ADMINISTERED_ORGS)."""
    return dict(
        Membership.all_orgs.filter(
            user=user, role__in=[Membership.Role.OWNER, Membership.Role.ADMIN]
        ).values_list("org_id", "role")
    )


def invite_token_hash(raw: str) -> str | None:
    """The hash an invite of token ``raw`` would be stored with; None for what cannot be one
    (empty, far too long, or a lone surrogate, which no token we issue holds)."""
    if not raw or len(raw) > MAX_INVITE_TOKEN_LENGTH:
        return None
    try:
        return hash_token(raw)
    except UnicodeEncodeError:
        return None


def invite_by_token(raw: str, *, for_update: bool = False) -> Invite | None:
    """The invite a raw token opens, whatever its state, or None, read whole in one query;
    ``for_update`` locks its row until the transaction ends. (The lookup's read of the few
    columns it answers is ``organizations.wire_reads.invite_to_read``.)"""
    token_hash = invite_token_hash(raw)
    if token_hash is None:
        return None
    invites = Invite.all_orgs.filter(token_hash=token_hash)
    return (invites.select_for_update() if for_update else invites).first()


def available(invite: Invite | None) -> Invite:
    """``invite`` (as a token opened it) if it is pending and unexpired. None: NotFound;
    accepted, revoked or expired: InviteUnavailable saying which."""
    if invite is None:
        raise NotFound("No invite with that token.")
    if invite.status != Invite.State.PENDING:
        raise InviteUnavailable.because(invite.status)
    return invite


def available_invite(raw: str, *, for_update: bool = False) -> Invite:
    """The pending, unexpired invite a raw token opens (``invite_by_token``), or the
    refusal of ``available``."""
    return available(invite_by_token(raw, for_update=for_update))


def find_organization(value: str) -> Organization:
    """The organization ``value`` names: its id, or its exact name when that is unique.
    Raises LookupError with a sentence for a person otherwise."""
    org_id = parse_id(value)
    if org_id is not None:
        org = Organization.objects.filter(id=org_id).first()
    else:
        matches = list(Organization.objects.filter(name=value)[:2])
        if len(matches) > 1:
            raise LookupError(f"Several organizations are named {value!r}; use the id.")
        org = matches[0] if matches else None
    if org is None:
        raise LookupError(f"No organization {value!r}.")
    return org


def member_ids(org_id, ids) -> set:
    """Which of ``ids`` are memberships of the organization (one query)."""
    return set(Membership.objects.for_org(org_id).filter(id__in=ids).values_list("id", flat=True))


def member_ids_by_email(org_id, emails) -> dict[str, object]:
    """The membership of the organization of each of ``emails`` that a member has, compared
    in any case: {lower-cased e-mail: membership id}, in one query (the members list's index
    on ``email_key`` serves it). Were two users' addresses to differ in case only, the
    older membership answers."""
    lowered = {email.lower() for email in emails}
    rows = (
        Membership.objects.for_org(org_id)
        .alias(key=CodePointOrder(F("email_key")))
        .filter(key__in=lowered)
        .order_by("-id")
        .values_list("email_key", "id")
    )
    return dict(rows)


def invites_listed(org_id, status: str | None = None) -> QuerySet:
    """The organization's invites, newest first (the id breaking ties), of ``status``
    (pending, accepted, revoked or expired: pending past its expiry) or all of them. Served
    by the indexes ``invite_org_newest`` and ``invite_org_state_newest``."""
    invites = Invite.objects.for_org(org_id)
    if status == "expired":
        invites = invites.filter(state=Invite.State.PENDING, expires_at__lte=timezone.now())
    elif status == Invite.State.PENDING:
        invites = invites.filter(state=Invite.State.PENDING, expires_at__gt=timezone.now())
    elif status is not None:
        invites = invites.filter(state=status)
    return invites.order_by("-created_at", "-id")


def with_course_ids(invites: list[Invite], org_id) -> list[Invite]:
    """``invites`` with their courses read in one query, for ``Invite.course_ids``."""
    links = Prefetch("course_links", queryset=InviteCourse.objects.for_org(org_id))
    prefetch_related_objects(invites, links)
    return invites


def invite_course_ids(org_id, invite_id) -> list:
    """The ids of the courses accepting the invite enrols its member in, in their order."""
    return list(
        InviteCourse.objects.for_org(org_id)
        .filter(invite_id=invite_id)
        .order_by("seq")
        .values_list("course_id", flat=True)
    )
