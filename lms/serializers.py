"""What the output of every tenant-owned record shares on the wire."""

from datetime import UTC, datetime

from rest_framework import serializers


# A tenant-owned record's organization and timestamps, read-only, in wire names; a subclass
# lists them in its ``Meta.fields`` where the contract places them. (A comment, not a
# docstring: the OpenAPI schema would describe every subclass with it.)
class OrgScopedSerializer(serializers.ModelSerializer):
    orgId = serializers.UUIDField(source="org_id", read_only=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)


def wire_time(value: datetime) -> str:
    """A timestamp as DRF's ``DateTimeField`` writes an aware time with ``TIME_ZONE = "UTC"``
    (for the lists that build their rows without a serializer)."""
    text = value.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text
