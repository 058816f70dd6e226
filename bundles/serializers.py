from bundles.models import Bundle
from lms.output import wire_time
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
        "createdAt": wire_time(created_at),
        "updatedAt": wire_time(updated_at),
    }
