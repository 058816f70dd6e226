from rest_framework import serializers

from bundles.models import Bundle


class BundleSerializer(serializers.ModelSerializer):
    orgId = serializers.UUIDField(source="org_id", read_only=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)

    class Meta:
        model = Bundle
        fields = ["orgId", "id", "name", "createdAt", "updatedAt"]
        read_only_fields = fields
