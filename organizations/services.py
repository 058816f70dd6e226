"""Writes of identity and tenancy."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from lms.errors import Conflict, PermissionDenied
from lms.events import Event, emit
from lms.tenancy import not_found
from organizations.errors import InviteUnavailable
from organizations.models import (
    INVITE_MAX_COURSES,
    ApiToken,
    Invite,
    InviteCourse,
    Membership,
    Organization,
    User,
    default_invite_expiry,
    hash_token,
    new_invite_token,
    new_raw_token,
    role_above,
)
from organizations.selectors import available_invite
from organizations.tasks import mail_invite


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


@dataclass(frozen=True)
class NewOrganization:
    """What creating an organization answers: its owner's membership, the owner's API token
    and, for a staff owner given a password here, that password (each shown this once)."""

    org: Organization
    owner: Membership
    token: str
    password: str | None


OWNER_TOKEN_NAME = "owner"


@transaction.atomic
def create_organization(*, name: str, owner_email: str, staff: bool = False) -> NewOrganization:
    """A new organization named ``name``, with ``owner_email`` as its owner (the user is
    created if needed) and an API token for them. A name already taken, in any case, is a
    Conflict and nothing is written. With ``staff`` the owner may sign in to the admin, where
    they see this organization's records: a user without a password of their own gets a new
    random one; one who has a password (a superuser, an owner of another organization) keeps
    it, and ``password`` is None."""
    org = Organization(name=name.strip())
    org.full_clean(validate_constraints=False)  # before any query: the text is sound
    taken = Conflict(f"An organization named {org.name!r} exists already.")
    if Organization.objects.filter(name__iexact=org.name).exists():
        raise taken
    try:
        with transaction.atomic():
            org.save()
    except IntegrityError:  # another one took the name meanwhile (the lower-cased index)
        raise taken from None
    owner = add_member(org=org, email=owner_email, role=Membership.Role.OWNER)
    _, raw = create_api_token(membership=owner, name=OWNER_TOKEN_NAME)
    password = None
    if staff:
        user = owner.user
        if not user.has_usable_password():
            password = secrets.token_urlsafe(12)
            user.set_password(password)
        user.is_staff = True
        user.save(update_fields=["password", "is_staff"])
    return NewOrganization(org=org, owner=owner, token=raw, password=password)


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
    """Revoke the tokens: refused at once by this process, within
    ``settings.LMS_TOKEN_CACHE_SECONDS`` by every other (organizations.authentication)."""
    from organizations.authentication import forget_tokens

    revoked = queryset.filter(revoked_at__isnull=True)
    forget_tokens(list(revoked.values_list("key_hash", flat=True)))
    return revoked.update(revoked_at=timezone.now())


MEMBER_TOKEN_NAME = "front end"


def mint_member_token(
    *, membership: Membership, minted_by: Membership, expires_in: timedelta
) -> tuple[ApiToken, str]:
    """A new token of ``membership`` expiring after ``expires_in``, minted by ``minted_by``
    (a member of the same organization). A role above the minter's own: PermissionDenied.
    The raw token is returned here and never again."""
    if membership.org_id != minted_by.org_id:
        raise ValueError("A token is minted for a member of the minter's organization.")
    if role_above(membership.role, minted_by.role):
        raise PermissionDenied("You may not mint a token for a role above your own.")
    return create_api_token(
        membership=membership,
        name=MEMBER_TOKEN_NAME,
        expires_at=timezone.now() + expires_in,
    )


def sign_out(*, membership: Membership, raw_token: str) -> bool:
    """Revoke the token ``raw_token`` of ``membership`` (the caller's own); True when this
    call revoked it."""
    tokens = ApiToken.objects.for_org(membership.org_id).filter(
        membership=membership, key_hash=hash_token(raw_token)
    )
    return revoke_tokens(tokens) == 1


def _issue_invite_token(invite: Invite) -> str:
    raw = new_invite_token()
    invite.token_prefix = raw[:12]
    invite.token_hash = hash_token(raw)
    return raw


def _require_future(expires_at: datetime) -> None:
    if expires_at <= timezone.now():
        raise DjangoValidationError({"expires_at": ["The expiry must be in the future."]})


@transaction.atomic
def create_invite(
    *,
    org: Organization,
    email: str,
    first_name: str,
    last_name: str,
    role: str = Membership.Role.LEARNER,
    invited_by: Membership | None = None,
    expires_at: datetime | None = None,
    instance: Invite | None = None,
    course_ids: Sequence[uuid.UUID] | None = None,
) -> tuple[Invite, str]:
    """A pending invite to ``org`` (saved into ``instance`` when the admin passes its unsaved
    object), enrolling the invitee in ``course_ids`` (courses of ``org``, checked here) when
    accepted; ``None`` keeps an instance's courses as they are. The raw token is returned
    here and never again: only its hash is kept."""
    if course_ids:
        check_invite_courses(org_id=org.id, course_ids=course_ids)
    return _new_invite(
        org=org,
        email=email,
        first_name=first_name,
        last_name=last_name,
        role=role,
        invited_by=invited_by,
        expires_at=expires_at,
        instance=instance,
        course_ids=course_ids,
    )


def _new_invite(
    *, org, email, first_name, last_name, role, invited_by, expires_at, instance, course_ids
) -> tuple[Invite, str]:
    """``create_invite`` once its courses are known to be the organization's."""
    expires_at = expires_at or default_invite_expiry()
    _require_future(expires_at)
    invite = instance or Invite()
    adding = invite._state.adding
    invite.org = org
    invite.email = User.objects.normalize_email(email.strip()).lower()
    invite.first_name = first_name.strip()
    invite.last_name = last_name.strip()
    invite.role = role
    invite.invited_by = invited_by
    invite.expires_at = expires_at
    invite.state = Invite.State.PENDING
    raw = _issue_invite_token(invite)
    _validate(invite)
    invite.save()
    if course_ids is not None:
        if not adding:
            InviteCourse.objects.for_org(org.id).filter(invite=invite).delete()
        InviteCourse.objects.bulk_create(
            InviteCourse(org_id=org.id, invite=invite, course_id=course_id, seq=seq)
            for seq, course_id in enumerate(course_ids, start=1)
        )
    return invite, raw


def check_invite_courses(*, org_id, course_ids: Sequence[uuid.UUID]) -> None:
    """Each of ``course_ids`` is a course of the organization (published or not), listed
    once; otherwise a ValidationError naming each offender as ``courseIds.N``."""
    if len(course_ids) > INVITE_MAX_COURSES:
        raise DjangoValidationError(
            {"courseIds": [f"Ensure this field has no more than {INVITE_MAX_COURSES} elements."]}
        )
    course_model: Any = InviteCourse._meta.get_field("course").related_model
    found = set(
        course_model.objects.for_org(org_id).filter(id__in=course_ids).values_list("id", flat=True)
    )
    errors, seen = {}, set()
    for index, course_id in enumerate(course_ids):
        if course_id in seen:
            errors[f"courseIds.{index}"] = ["This course is listed already."]
        elif course_id not in found:
            errors[f"courseIds.{index}"] = ["No course of the organization has this id."]
        seen.add(course_id)
    if errors:
        raise DjangoValidationError(errors)


@transaction.atomic
def invite_member(
    *,
    inviter: Membership,
    email: str,
    role: str = Membership.Role.LEARNER,
    course_ids: Sequence[uuid.UUID] = (),
    expires_at: datetime | None = None,
    send_email: bool = False,
    **names: str,
) -> tuple[Invite, str]:
    """A pending invite from ``inviter`` to their organization for ``email`` with ``names``
    (``first_name``, ``last_name``), enrolling the invitee in ``course_ids`` when accepted
    (CONTRACT 9.2); the raw token is returned here and never again.

    In the contract's order: courses that are not the organization's are a
    ValidationError; a role above the inviter's own, PermissionDenied; a pending, unexpired
    invite to the same e-mail address (any case) or a member with it, a Conflict naming
    ``email``. Invites of one organization are made one at a time (its row is locked), so
    two at once cannot both pass that check. With ``send_email`` the accept link is
    e-mailed by the task worker once the invite is committed."""
    check_invite_courses(org_id=inviter.org_id, course_ids=course_ids)
    if role_above(role, inviter.role):
        raise PermissionDenied("You may not invite anyone with a role above your own.")
    list(Organization.objects.select_for_update(no_key=True).filter(id=inviter.org_id))
    email = User.objects.normalize_email(email.strip()).lower()
    if Membership.objects.for_org(inviter.org_id).filter(user__email__iexact=email).exists():
        raise Conflict(
            "A member of the organization has this e-mail address.",
            details={"email": ["A member has this e-mail address."]},
        )
    pending = Invite.objects.for_org(inviter.org_id).filter(
        email__iexact=email, state=Invite.State.PENDING, expires_at__gt=timezone.now()
    )
    if pending.exists():
        raise Conflict(
            "A pending invite to this e-mail address exists already.",
            details={"email": ["A pending invite to this e-mail address exists."]},
        )
    invite, raw = _new_invite(
        org=inviter.org, invited_by=inviter, instance=None, email=email, role=role, **names,
        expires_at=expires_at, course_ids=course_ids,
    )  # fmt: skip
    if send_email:
        transaction.on_commit(partial(mail_invite, invite, raw), robust=True)
    return invite, raw


@transaction.atomic
def revoke_pending_invite(*, org_id, invite_id) -> Invite:
    """Revoke the organization's pending, unexpired invite ``invite_id`` (CONTRACT 9.2): its
    token answers 410 from then on. Unknown: NotFound; accepted, revoked or expired: a
    Conflict."""
    invite = Invite.objects.for_org(org_id).select_for_update().filter(id=invite_id).first()
    if invite is None:
        raise not_found(Invite)
    if invite.status != Invite.State.PENDING:
        raise Conflict(f"Only a pending invite can be revoked; this one is {invite.status}.")
    invite.state = Invite.State.REVOKED
    invite.save(update_fields=["state", "updated_at"])
    return invite


@transaction.atomic
def revoke_invite(*, invite: Invite) -> bool:
    """Revoke a pending (or expired) invite so its token stops working. An accepted invite
    stays accepted. True when the invite was revoked by this call."""
    revoked = (
        Invite.objects.filter(
            org_id=invite.org_id, pk=invite.pk, state=Invite.State.PENDING
        ).update(state=Invite.State.REVOKED, updated_at=timezone.now())
        == 1
    )
    if revoked:
        invite.refresh_from_db(fields=["state", "updated_at"])
    return revoked


@transaction.atomic
def reissue_invite(*, invite: Invite, expires_at: datetime | None = None) -> tuple[Invite, str]:
    """A new token and a new expiry for a pending, expired or revoked invite, which is
    pending again; the old token stops working at once. An accepted invite is a Conflict."""
    invite = Invite.objects.select_for_update().get(org_id=invite.org_id, pk=invite.pk)
    if invite.state == Invite.State.ACCEPTED:
        raise Conflict("An accepted invite cannot be re-issued.")
    expires_at = expires_at or default_invite_expiry()
    _require_future(expires_at)
    raw = _issue_invite_token(invite)
    invite.expires_at = expires_at
    invite.state = Invite.State.PENDING
    invite.save(update_fields=["token_prefix", "token_hash", "expires_at", "state", "updated_at"])
    return invite, raw


INVITE_TOKEN_NAME = "invite"


@dataclass(frozen=True)
class AcceptedInvite:
    """What accepting answers: the membership and its new API token (shown this once)."""

    invite: Invite
    membership: Membership
    token: str


@transaction.atomic
def accept_invite(*, raw_token: str) -> AcceptedInvite:
    """Accept the pending invite ``raw_token`` opens, exactly once.

    The invite's row is locked first, so of simultaneous accepts one sees it pending and the
    others, once it commits, see it accepted (InviteUnavailable). The user is the one with
    the invite's e-mail address (any case), else a new one with the invite's names; an
    existing membership keeps its role. The ``invite.accepted`` event is emitted in this
    transaction.
    """
    invite = available_invite(raw_token, for_update=True)
    user = _user_for_invite(invite)
    if not user.is_active:
        raise InviteUnavailable("The account of this invite's e-mail address is deactivated.")
    membership, _ = Membership.objects.get_or_create(
        org_id=invite.org_id, user=user, defaults={"role": invite.role}
    )
    _, raw = create_api_token(membership=membership, name=INVITE_TOKEN_NAME)
    invite.state = Invite.State.ACCEPTED
    invite.accepted_by = membership
    invite.accepted_at = timezone.now()
    invite.save(update_fields=["state", "accepted_by", "accepted_at", "updated_at"])
    emit(
        Event(
            type="invite.accepted",
            org_id=invite.org_id,
            occurred_at=invite.accepted_at,
            data={
                "inviteId": str(invite.id),
                "memberId": str(membership.id),
                "email": user.email,
                "invitedBy": str(invite.invited_by_id) if invite.invited_by_id else None,
            },
        )
    )
    return AcceptedInvite(invite=invite, membership=membership, token=raw)


def _user_for_invite(invite: Invite) -> User:
    """The user whose e-mail address is the invite's, whatever its case (the oldest if
    several), else a new one with the invite's names and no usable password."""
    user = User.objects.filter(email__iexact=invite.email).order_by("date_joined", "id").first()
    if user is not None:
        return user
    email = User.objects.normalize_email(invite.email).lower()
    try:
        with transaction.atomic():
            return User.objects.create(
                email=email,
                first_name=invite.first_name,
                last_name=invite.last_name,
                password=make_password(None),
            )
    except IntegrityError:  # created meanwhile by a concurrent request
        return User.objects.get(email=email)


def _validate(invite: Invite) -> None:
    """The model's own validation (field formats, choices, the inviter's organization), the
    same that the admin's form runs; a ValidationError keyed by the model's field names."""
    invite.full_clean(exclude=["org", "token_prefix", "token_hash"], validate_unique=False)
