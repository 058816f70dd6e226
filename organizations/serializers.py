from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from rest_framework import serializers

from lms.fields import (
    JsonBooleanField,
    JsonIntegerField,
    QueryChoiceField,
    StrictCharField,
    StrictUUIDField,
)
from lms.web.shapes import Shape
from organizations.models import INVITE_MAX_COURSES, Membership


class InviteSerializer(serializers.Serializer):
    """The invite as its holder reads it: who is invited, nothing of the organization."""

    email = serializers.EmailField()
    firstName = serializers.CharField(source="first_name")
    lastName = serializers.CharField(source="last_name")


class AcceptedInviteSerializer(serializers.Serializer):
    """The answer to accepting an invite: the new member and their API token, shown once."""

    token = serializers.CharField(
        help_text="A new API token of the membership (lms_...), shown only in this answer."
    )
    orgId = serializers.UUIDField(source="membership.org_id")
    role = serializers.ChoiceField(
        source="membership.role",
        choices=Membership.Role.choices,
        help_text="The membership's role: the invite's, or the one an existing membership kept.",
    )
    # The invite's, never an existing account's stored ones (CONTRACT 7.3): accepting must
    # not tell whoever holds the token whether, and under which names, the address has an
    # account. The account's address is the invite's but for letter case, which is not told.
    email = serializers.EmailField(source="invite.email")
    firstName = serializers.CharField(source="invite.first_name", allow_blank=True)
    lastName = serializers.CharField(source="invite.last_name", allow_blank=True)


# The only body accepting takes: none, or an empty object.
EMPTY_BODY_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "maxProperties": 0,
    "description": "No body, or {}.",
}


# A front end's token of one member (CONTRACT 9.8): how long it lives, in seconds.
MEMBER_TOKEN_MIN_SECONDS, MEMBER_TOKEN_MAX_SECONDS, MEMBER_TOKEN_DEFAULT_SECONDS = 60, 86400, 3600


class MintTokenSerializer(serializers.Serializer):
    expiresIn = JsonIntegerField(
        source="expires_in",
        required=False,
        default=MEMBER_TOKEN_DEFAULT_SECONDS,
        min_value=MEMBER_TOKEN_MIN_SECONDS,
        max_value=MEMBER_TOKEN_MAX_SECONDS,
        help_text="Seconds until the token expires: 60 to 86400 (default 3600).",
    )

    class Meta:
        ref_name = "MintTokenInput"


class MintedTokenSerializer(serializers.Serializer):
    """A new token of a member, shown this once."""

    token = serializers.CharField(help_text="The new API token (lms_...), shown only here.")
    memberId = serializers.UUIDField(source="membership_id")
    expiresAt = serializers.DateTimeField(source="expires_at")


# --- invites over the API (CONTRACT 9.2) -----------------------------------------------------

INVITE_MAX_DAYS = 90
INVITE_STATUSES = ("pending", "accepted", "revoked", "expired")


class CreateInviteSerializer(serializers.Serializer):
    email = serializers.EmailField(max_length=254)
    firstName = StrictCharField(source="first_name", max_length=150)
    lastName = StrictCharField(source="last_name", max_length=150)
    role = serializers.ChoiceField(
        choices=Membership.Role.choices, required=False, default=Membership.Role.LEARNER
    )
    courseIds = serializers.ListField(
        source="course_ids",
        child=StrictUUIDField(),
        required=False,
        default=list,
        max_length=INVITE_MAX_COURSES,
        help_text="Courses of the organization (published or not) that accepting enrols the "
        "new member in; at most 100, each once.",
    )
    expiresAt = serializers.DateTimeField(
        source="expires_at",
        required=False,
        help_text="In the future and at most 90 days ahead (default: 7 days from now).",
    )
    sendEmail = JsonBooleanField(
        source="send_email",
        required=False,
        default=False,
        help_text="E-mail the invitee the accept link (needs LMS_INVITE_URL on the server).",
    )

    class Meta:
        ref_name = "CreateInviteInput"

    def validate_expiresAt(self, value):
        now = timezone.now()
        if value <= now:
            raise serializers.ValidationError("The expiry must be in the future.")
        if value > now + timedelta(days=INVITE_MAX_DAYS):
            raise serializers.ValidationError(
                f"The expiry must be at most {INVITE_MAX_DAYS} days ahead."
            )
        return value

    def validate_sendEmail(self, value: bool) -> bool:
        if value and not settings.LMS_INVITE_URL:
            raise serializers.ValidationError(
                "Invites cannot be e-mailed: the server has no LMS_INVITE_URL."
            )
        return value


class InviteRowSerializer(serializers.Serializer):
    """An invite as staff see it: never its token."""

    id = serializers.UUIDField()
    email = serializers.EmailField()
    firstName = serializers.CharField(source="first_name")
    lastName = serializers.CharField(source="last_name")
    role = serializers.ChoiceField(choices=Membership.Role.choices)
    courseIds = serializers.ListField(source="course_ids", child=serializers.UUIDField())
    status = serializers.ChoiceField(choices=INVITE_STATUSES)
    expiresAt = serializers.DateTimeField(source="expires_at")
    createdAt = serializers.DateTimeField(source="created_at")


class ListedInviteSerializer(InviteRowSerializer):
    acceptedAt = serializers.DateTimeField(source="accepted_at", allow_null=True)
    memberId = serializers.UUIDField(
        source="accepted_by_id",
        allow_null=True,
        help_text="The membership the accept created or found; null until accepted.",
    )


class CreatedInviteSerializer(InviteRowSerializer):
    token = serializers.CharField(
        help_text="The invite's token (inv_...) for reading and accepting it, shown only here."
    )


class InviteListParams(serializers.Serializer):
    status = QueryChoiceField(choices=INVITE_STATUSES, required=False)


# --- the members list (CONTRACT 9.1) ---------------------------------------------------------

SEARCH_MAX_LENGTH = 200


class MemberSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="The membership's id: the id 9.3 enrols.")
    email = serializers.EmailField()
    firstName = serializers.CharField(source="first_name", allow_blank=True)
    lastName = serializers.CharField(source="last_name", allow_blank=True)
    role = serializers.ChoiceField(choices=Membership.Role.choices)
    createdAt = serializers.DateTimeField(source="created_at", help_text="When they joined.")


class MemberListQuery(serializers.Serializer):
    """The members list's filters; ``page`` and ``pageSize`` are ``lms.pagination``'s."""

    search = serializers.CharField(
        max_length=SEARCH_MAX_LENGTH,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="At most 200 characters: members whose e-mail address, first or last name "
        "contains it, in any case. Empty: every member.",
    )
    role = QueryChoiceField(
        choices=Membership.Role.choices,
        required=False,
        help_text="Only members of this role (an empty `role=` is none of them: 400).",
    )


# The body of each row ``organizations.wire_reads.members`` answers.
MEMBER = Shape(MemberSerializer)
# The body of an invite the lookup answers (``InviteLookupView``).
INVITE = Shape(InviteSerializer)
