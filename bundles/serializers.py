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
    """What ``BundleSerializer`` answers for a bundle, from its ``LISTED_COLUMNS`` values read
    with ids and timestamps as wire text (``lms.db.wire``): the list reads tuples
    (``values_list``) and skips building a model and a serializer per row."""
    org_id, id_, name, created_at, updated_at = row
    return {
        "orgId": org_id,
        "id": id_,
        "name": name,
        "createdAt": created_at,
        "updatedAt": updated_at,
    }
