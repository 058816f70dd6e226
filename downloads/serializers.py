"""Input validation and the output shape of links. Wire names are camelCase."""

import re
import uuid

from rest_framework import serializers

from downloads.models import NAME_MAX_LENGTH, DownloadAsset

_UUID_TEXT = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")


class UuidStringField(serializers.UUIDField):
    """A UUID written as a hyphenated string (either case). DRF's UUIDField would also take
    a JSON number, braces or a ``urn:uuid:`` prefix; an id on the wire is only the string."""

    def to_internal_value(self, data):
        if not isinstance(data, str) or not _UUID_TEXT.fullmatch(data):
            self.fail("invalid", value=data)
        return uuid.UUID(data)


class StrictCharField(serializers.CharField):
    """A JSON string only: DRF's CharField would turn the number 42 into "42"."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class LinkAssetInputSerializer(serializers.Serializer):
    assetId = UuidStringField(source="asset_id", help_text="The media-library asset to link.")
    displayName = StrictCharField(
        source="display_name",
        required=False,
        allow_null=True,
        max_length=NAME_MAX_LENGTH,
        help_text="Optional; defaults to the asset's name. Ignored when the asset is "
        "already linked.",
    )

    class Meta:
        ref_name = "LinkAssetInput"


class DownloadAssetSerializer(serializers.ModelSerializer):
    """A link, without touching its download or asset rows (the ids are on the link)."""

    orgId = serializers.UUIDField(source="org_id", read_only=True)
    downloadId = serializers.UUIDField(source="download_id", read_only=True)
    assetId = serializers.UUIDField(source="asset_id", read_only=True)
    seq = serializers.IntegerField(read_only=True, help_text="1-based position.")
    displayName = serializers.CharField(source="display_name", read_only=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)

    class Meta:
        model = DownloadAsset
        fields = [
            "orgId",
            "id",
            "downloadId",
            "assetId",
            "seq",
            "displayName",
            "createdAt",
            "updatedAt",
        ]
        read_only_fields = fields
        ref_name = "DownloadAssetLink"
