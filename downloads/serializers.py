"""Input validation and the output shape of links. Wire names are camelCase.

``DownloadAssetSerializer`` is the one declaration of a link on the wire: the schema
documents it, and ``LINK`` (``lms.web.shapes``) derives from it what the services read and
write of a link (``LINK.sources``, ``LINK.record``) and the bodies of the link, unlink and
list answers, built without a model instance or a serializer per link.

A link's display name is judged once, by the rule of ``downloads.models``
(``display_name_problems``) that the services apply for the API and the admin alike;
``LinkAssetInputSerializer`` only documents it and hands it on.
"""

from collections.abc import Mapping

from rest_framework import serializers
from rest_framework.fields import empty

from downloads.models import NAME_MAX_LENGTH, DownloadAsset, display_name_problems
from lms.fields import StrictUUIDField
from lms.serializers import OrgScopedSerializer
from lms.web.shapes import Shape


class DisplayNameField(serializers.CharField):
    """Documented as the string field it is declared as, its value handed on as it came:
    the service judges it (``downloads.services.clean_display_name``). Absent or null is
    read as a string field reads it."""

    def run_validation(self, data=empty):
        if data is empty or data is None:
            return super().run_validation(data)
        return data


class LinkAssetInputSerializer(serializers.Serializer):
    assetId = StrictUUIDField(source="asset_id", help_text="The media-library asset to link.")
    displayName = DisplayNameField(
        source="display_name",
        required=False,
        allow_null=True,
        max_length=NAME_MAX_LENGTH,
        help_text="Optional; defaults to the asset's name. Ignored when the asset is "
        "already linked.",
    )

    class Meta:
        ref_name = "LinkAssetInput"

    def to_internal_value(self, data):
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as error:
            # A body refused here never reaches the service that judges the display name:
            # its problems are named here, beside the other fields', by the same rule.
            name = data.get("displayName") if isinstance(data, Mapping) else None
            problems = [] if name is None else display_name_problems(name)
            if problems and isinstance(error.detail, dict):
                error.detail["displayName"] = problems
            raise


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
