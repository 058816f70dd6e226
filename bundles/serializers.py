from bundles.models import Bundle
from lms.serializers import OrgScopedSerializer
from lms.web.shapes import Shape


class BundleSerializer(OrgScopedSerializer):
    class Meta:
        model = Bundle
        fields = ["orgId", "id", "name", "createdAt", "updatedAt"]
        read_only_fields = fields


# A listed bundle on the wire: the list reads ``BUNDLE.columns`` (ids and timestamps as wire
# text) and answers ``BUNDLE.bodies(rows)``, with no model or serializer per row.
BUNDLE = Shape(BundleSerializer)
