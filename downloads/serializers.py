"""Input validation and the output shape of links. Wire names are camelCase."""

from rest_framework import serializers

from downloads.models import NAME_MAX_LENGTH, DownloadAsset
from lms.fields import StrictCharField, StrictUUIDField
from lms.serializers import OrgScopedSerializer, wire_time


class LinkAssetInputSerializer(serializers.Serializer):
    assetId = StrictUUIDField(source="asset_id", help_text="The media-library asset to link.")
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


class DownloadAssetSerializer(OrgScopedSerializer):
    """An asset of the media library linked to a download, at position `seq`."""

    # Built without touching the download or asset rows: the ids are on the link.

    downloadId = serializers.UUIDField(source="download_id", read_only=True)
    assetId = serializers.UUIDField(source="asset_id", read_only=True)
    seq = serializers.IntegerField(read_only=True, help_text="1-based position.")
    displayName = serializers.CharField(source="display_name", read_only=True)

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


def link_row(row: tuple) -> dict:
    """What ``DownloadAssetSerializer`` answers for a link, from its values in the order of
    ``downloads.services.LINK_COLUMNS``: the link and unlink answers are built from the rows
    they read, without a model instance or a serializer per link."""
    org_id, id_, download_id, asset_id, seq, display_name, created_at, updated_at = row
    return {
        "orgId": str(org_id),
        "id": str(id_),
        "downloadId": str(download_id),
        "assetId": str(asset_id),
        "seq": seq,
        "displayName": display_name,
        "createdAt": wire_time(created_at),
        "updatedAt": wire_time(updated_at),
    }
