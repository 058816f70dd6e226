from rest_framework import serializers

from lms.fields import JsonIntegerField
from lms.web.shapes import Shape
from organizations.models import Membership


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
    role = serializers.ChoiceField(
        choices=Membership.Role.choices, required=False, help_text="Only members of this role."
    )


# The body of each row ``organizations.wire_reads.members`` answers.
MEMBER = Shape(MemberSerializer)
