"""What the output of every tenant-owned record shares on the wire."""

from rest_framework import serializers


# A tenant-owned record's organization and timestamps, read-only, in wire names; a subclass
# lists them in its ``Meta.fields`` where the contract places them. (A comment, not a
# docstring: the OpenAPI schema would describe every subclass with it.)
class OrgScopedSerializer(serializers.ModelSerializer):
    orgId = serializers.UUIDField(source="org_id", read_only=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)
