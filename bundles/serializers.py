from datetime import UTC

from bundles.models import Bundle
from lms.serializers import OrgScopedSerializer

# The columns a listed bundle reads, in the order ``bundle_row`` takes them.
LISTED_COLUMNS = ("org_id", "id", "name", "created_at", "updated_at")


class BundleSerializer(OrgScopedSerializer):
    class Meta:
        model = Bundle
        fields = ["orgId", "id", "name", "createdAt", "updatedAt"]
        read_only_fields = fields


def bundle_row(row: tuple) -> dict:
    """What ``BundleSerializer`` answers for a bundle, from its ``LISTED_COLUMNS`` values: the
    list reads tuples (``values_list``) and skips building a model and a serializer per row."""
    org_id, id_, name, created_at, updated_at = row
    return {
        "orgId": str(org_id),
        "id": str(id_),
        "name": name,
        "createdAt": _iso(created_at),
        "updatedAt": _iso(updated_at),
    }


def _iso(value) -> str:
    # As DRF's DateTimeField writes an aware time with TIME_ZONE = "UTC".
    text = value.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text
