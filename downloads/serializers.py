"""Input validation and the output shape of links. Wire names are camelCase.

``DownloadAssetSerializer`` is the one declaration of a link on the wire: the schema
documents it, and ``LINK`` (``lms.web.shapes``) derives from it what the services read and
write of a link (``LINK.sources``, ``LINK.record``) and the bodies of the link, unlink and
list answers, built without a model instance or a serializer per link.

``LinkAssetInputSerializer`` is the API's edge for a link: it reads the body into typed
values (an asset id, and a display name trimmed, not blank, of at most ``NAME_MAX_LENGTH``
characters, without NUL or a lone surrogate, or None), which the services take as they are.
"""

from rest_framework import serializers

from downloads.models import NAME_MAX_LENGTH, DownloadAsset
from lms.fields import StrictCharField, StrictUUIDField
from lms.serializers import OrgScopedSerializer
from lms.web.shapes import Shape


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


LINK = Shape(DownloadAssetSerializer)
