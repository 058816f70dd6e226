"""Identity and tenancy: users, organizations, memberships and API tokens."""

from __future__ import annotations

import hashlib
import secrets

from django.contrib.auth.models import AbstractUser, UserManager
from django.db import models
from django.db.models import Q
from django.utils import timezone

from lms.ids import uuid7
from lms.models import BaseModel
from lms.tenancy import OrgScopedModel

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

    def __str__(self) -> str:
        return self.email


class Organization(BaseModel):
    """The tenant. Every tenant-owned record points here through its ``org`` field."""

    name = models.CharField(max_length=200)

    class Meta:
        ordering = ["name"]

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

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "user"], name="membership_org_user_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.org} ({self.role})"


def hash_token(raw: str) -> str:
    """Tokens carry 256 random bits, so one SHA-256 is as good as a slow hash here."""
    return hashlib.sha256(raw.encode()).hexdigest()


def new_raw_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class ApiTokenQuerySet(models.QuerySet):
    def active(self):
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).filter(
            Q(expires_at__isnull=True) | Q(expires_at__gt=now)
        )


class ApiToken(OrgScopedModel):
    """A bearer token of one membership. Only its hash is stored; ``prefix`` identifies it."""

    membership = models.ForeignKey(Membership, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = ApiTokenQuerySet.as_manager()

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
