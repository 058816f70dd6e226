"""Identity and tenancy: users, organizations, memberships and API tokens."""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from datetime import timedelta

from django.contrib.auth.models import AbstractUser, UserManager
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F
from django.db.models.functions import Lower
from django.utils import timezone

from lms.db.collation import CodePointOrder
from lms.ids import uuid7
from lms.models import BaseModel
from lms.tenancy import OrgScopedModel, org_scoped_key, org_unique

TOKEN_PREFIX = "lms_"


class EmailUserManager(UserManager):
    use_in_migrations = True

    def _create_user(self, email, password, **extra_fields):
        if not email:
            raise ValueError("An e-mail address is required.")
        user = self.model(email=self.normalize_email(email).lower(), **extra_fields)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email, password=None, **extra_fields):
        extra_fields.setdefault("is_staff", False)
        extra_fields.setdefault("is_superuser", False)
        return self._create_user(email, password, **extra_fields)

    def create_superuser(self, email, password=None, **extra_fields):
        extra_fields.setdefault("is_staff", True)
        extra_fields.setdefault("is_superuser", True)
        return self._create_user(email, password, **extra_fields)


# Between the fields of ``Membership.search_key``: a control character no address or name
# holds.
SEARCH_SEPARATOR = "\x1f"
# The user's fields the membership's keys are made of.
KEYED = ("email", "first_name", "last_name")


def member_keys(user) -> tuple[str, str]:
    """A membership's ``email_key`` and ``search_key`` from its user."""
    fields = [user.email.lower(), user.first_name.lower(), user.last_name.lower()]
    return fields[0], "".join(SEARCH_SEPARATOR + field for field in fields)


class User(AbstractUser):
    """A person. Signs in to the admin with the e-mail address; API access is by token."""

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    username = None
    email = models.EmailField("e-mail address", unique=True)

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []

    objects = EmailUserManager()

    class Meta:
        ordering = ["email"]

    def save(self, *args, **kwargs):
        new = self._state.adding  # a new user has no membership yet
        super().save(*args, **kwargs)
        update_fields = kwargs.get("update_fields")
        if not new and (update_fields is None or {*KEYED} & {*update_fields}):
            # Each membership keeps the user's keys (``Membership.email_key``, ``search_key``).
            email_key, search_key = member_keys(self)
            Membership.all_orgs.filter(user=self).exclude(
                email_key=email_key, search_key=search_key
            ).update(email_key=email_key, search_key=search_key)

    def __str__(self) -> str:
        return self.email


def validate_printable(value: str) -> None:
    """Text a person reads on one line: no control character, line or paragraph separator,
    invisible format character (U+202E, which turns the text after it around, zero-width
    ones) or lone surrogate (bytes that were not UTF-8)."""
    for char in value:
        if unicodedata.category(char) in {"Cc", "Cf", "Zl", "Zp", "Cs"}:
            raise ValidationError(
                f"Contains a control or invisible character (U+{ord(char):04X}).",
                code="unprintable",
            )


class Organization(BaseModel):
    """The tenant. Every tenant-owned record points here through its ``org`` field. Its name
    is unique in any case (the index on its lower-cased name decides a race)."""

    name = models.CharField(max_length=200, validators=[validate_printable])

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(Lower("name"), name="organization_name_unique_any_case"),
        ]

    def __str__(self) -> str:
        return self.name


class Membership(OrgScopedModel):
    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        ADMIN = "admin", "Admin"
        INSTRUCTOR = "instructor", "Instructor"
        LEARNER = "learner", "Learner"

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.LEARNER)
    # Kept from the user by every save of the membership or the user (``User.save``), so
    # that the members list (CONTRACT 9.1) reads its order and its search from this table's
    # own indexes instead of every member's user row: the e-mail address lower-cased
    # (Python's ``str.lower``), and the address, first and last name lower-cased, each
    # after a SEARCH_SEPARATOR (which a search term holding one never matches).
    email_key = models.CharField(max_length=254, default="", editable=False)
    search_key = models.TextField(default="", editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "user"], name="membership_org_user_unique"),
        ]
        # The members list, all roles or one: each page one range of one of these, read
        # from the index alone (``email_key`` itself, never compared, is there for that).
        # On PostgreSQL a trigram index on (org, search_key) serves the search (migration
        # 0007).
        indexes = [
            models.Index(
                F("org"),
                CodePointOrder(F("email_key")),
                F("id"),
                F("email_key"),
                name="membership_org_email",
            ),
            models.Index(
                F("org"),
                F("role"),
                CodePointOrder(F("email_key")),
                F("id"),
                F("email_key"),
                name="membership_org_role_email",
            ),
        ]

    def save(self, *args, **kwargs):
        self.email_key, self.search_key = member_keys(self.user)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None:
            kwargs["update_fields"] = {*update_fields, "email_key", "search_key"}
        super().save(*args, **kwargs)

    def __str__(self) -> str:
        return f"{self.user} in {self.org} ({self.role})"


# Roles from the least to the most: nobody grants, or acts for, a role above their own.
ROLE_RANK = {
    Membership.Role.LEARNER: 1,
    Membership.Role.INSTRUCTOR: 2,
    Membership.Role.ADMIN: 3,
    Membership.Role.OWNER: 4,
}


def role_above(role: str, own: str) -> bool:
    """Whether ``role`` is above ``own`` (a role nobody holding ``own`` may grant)."""
    return ROLE_RANK[role] > ROLE_RANK.get(own, 0)


def hash_token(raw: str) -> str:
    """Tokens carry 256 random bits, so one SHA-256 is as good as a slow hash here."""
    return hashlib.sha256(raw.encode()).hexdigest()


def new_raw_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class ApiToken(OrgScopedModel):
    """A bearer token of one membership. Only its hash is stored; ``prefix`` identifies it."""

    membership = models.ForeignKey(Membership, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = "API token"
        indexes = [models.Index(fields=["org", "membership"], name="apitoken_org_membership")]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name or 'token'})"

    @property
    def is_active(self) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()


INVITE_TOKEN_PREFIX = "inv_"
INVITE_LIFETIME = timedelta(days=7)


def new_invite_token() -> str:
    return INVITE_TOKEN_PREFIX + secrets.token_urlsafe(32)


def default_invite_expiry():
    return timezone.now() + INVITE_LIFETIME


def _member_or_null(*, related_name: str, **options) -> models.ForeignKey:
    """A membership that acted on a record; null once that membership is deleted."""
    return models.ForeignKey(
        Membership,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name=related_name,
        **options,
    )


def _by_seq(link) -> int:
    return link.seq


class Invite(OrgScopedModel):
    """An invitation to join ``org`` with ``role``.

    Only the SHA-256 of the token is stored; ``token_prefix`` identifies it to staff. The
    stored ``state`` is pending, accepted or revoked; a pending invite whose ``expires_at``
    has passed is expired, which is derived from the clock and never stored.
    """

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        ACCEPTED = "accepted", "Accepted"
        REVOKED = "revoked", "Revoked"

    email = models.EmailField("e-mail address")
    first_name = models.CharField(max_length=150)
    last_name = models.CharField(max_length=150)
    role = models.CharField(
        max_length=20, choices=Membership.Role.choices, default=Membership.Role.LEARNER
    )
    invited_by = _member_or_null(related_name="invites_sent")
    expires_at = models.DateTimeField(default=default_invite_expiry)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    # Who accepted it (the membership the invite gave or found) and when; set once.
    accepted_by = _member_or_null(related_name="invites_accepted", editable=False)
    accepted_at = models.DateTimeField(null=True, blank=True, editable=False)
    token_prefix = models.CharField(max_length=12, editable=False)
    # Looked up without an organization (the public lookup knows only the token), so the
    # one index that does not start with ``org``, like ApiToken.key_hash.
    token_hash = models.CharField(max_length=64, unique=True, editable=False)

    class Meta:
        indexes = [
            models.Index(fields=["org", "email"], name="invite_org_email"),
            # The list (CONTRACT 9.2): newest first, whole or by stored state.
            models.Index(fields=["org", "-created_at", "-id"], name="invite_org_newest"),
            models.Index(
                fields=["org", "state", "-created_at", "-id"], name="invite_org_state_newest"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.email} ({self.status})"

    @property
    def is_expired(self) -> bool:
        return self.expires_at <= timezone.now()

    @property
    def course_ids(self) -> list:
        """The ids of the courses accepting enrols the invitee in, in the order given (one
        query, none when ``course_links`` were prefetched)."""
        return [link.course_id for link in sorted(self.course_links.all(), key=_by_seq)]

    @property
    def status(self) -> str:
        """pending, expired, accepted or revoked: the state with expiry applied."""
        if self.state == self.State.PENDING and self.is_expired:
            return "expired"
        return self.state

    def clean(self) -> None:
        super().clean()
        if (
            self.invited_by_id is not None
            and self.org_id is not None
            and self.invited_by.org_id != self.org_id
        ):
            raise ValidationError(
                {"invited_by": "The inviter must be a member of the invite's organization."}
            )


# At most this many courses an invite enrols its invitee in (CONTRACT 9.2).
INVITE_MAX_COURSES = 100


class InviteCourse(OrgScopedModel):
    """A course that accepting ``invite`` enrols the new member in (CONTRACT 9.2), at
    position ``seq`` (1-based) of the invite's ``courseIds``. The course is named by its
    app label: identity knows a course only as the row an invite points at, and the learn
    app does the enrolling (its receiver of ``invite.accepted``). Deleting the course
    deletes the link."""

    invite = org_scoped_key(Invite, related_name="course_links")
    course = models.ForeignKey("learn.Course", on_delete=models.CASCADE, related_name="+")
    seq = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [org_unique("invite", "course", name="invitecourse_org_invite_course")]

    def __str__(self) -> str:
        return f"{self.course_id} of invite {self.invite_id}"


# The keys under which accepting an invite remembers its answer (``organizations.views``):
# never a key a caller sends for another write (a client's key is stored as sent, and this
# prefix and a digest are what no one types), so the purge of these alone is one index.
INVITE_ACCEPT_KEY_PREFIX = "invite-accept "


class IdempotencyRecord(OrgScopedModel):
    """The first answer to an ``Idempotency-Key`` (``lms.idempotency``), replayed for a while:
    a caller's learn writes' for 24 hours, keyed by the caller's key; an invite accept's for
    10 minutes (CONTRACT 7.3), kept under the membership it made, keyed by a digest of the
    invite's token and the key (``INVITE_ACCEPT_KEY_PREFIX``), with its new API token sealed.

    The table was learn's (its name stays, so no release ever renames it); the invite
    accepts' own table before it is gone (migrations 0010, 0011)."""

    membership = org_scoped_key(Membership, related_name="+")
    key = models.CharField(max_length=255)
    response_status = models.PositiveSmallIntegerField()
    response_body = models.JSONField()

    class Meta:
        db_table = "learn_idempotencyrecord"
        constraints = [org_unique("membership", "key", name="idempotency_org_member_key")]
        indexes = [
            models.Index(
                fields=["org", "membership", "created_at"], name="idempotency_org_created"
            ),
            # The expired invite accepts' answers, purged across organizations.
            models.Index(
                fields=["created_at"],
                condition=models.Q(key__startswith=INVITE_ACCEPT_KEY_PREFIX),
                name="idempotency_invite_created",
            ),
        ]

    def __str__(self) -> str:
        return self.key


class ThrottleWindow(models.Model):
    """The accepted hits of one throttle key within its window, for the database store of
    ``organizations.throttling``. Keyed by scope and client address, not by organization:
    it is not tenant data. ``hits`` are Unix times; ``expires`` is a time by which the last
    of them has left the window, after which the row may be purged (on PostgreSQL up to two
    windows after the last hit, see ``organizations.throttling``).

    On PostgreSQL the table is unlogged (migration 0005): its writes skip the write-ahead
    log, so a hit's commit does not wait for the disk. A database crash empties it, and a
    standby does not have it: every address then starts a fresh window, at most one
    window's worth of lookups more for each, and nothing else is lost."""

    key = models.CharField(max_length=64, primary_key=True)
    hits = models.JSONField(default=list)
    expires = models.FloatField(db_index=True)

    def __str__(self) -> str:
        return self.key
