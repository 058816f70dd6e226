from bundles.models import Bundle
from lms.serializers import OrgScopedSerializer


class BundleSerializer(OrgScopedSerializer):
    class Meta:
        model = Bundle
        fields = ["orgId", "id", "name", "createdAt", "updatedAt"]
        read_only_fields = fields
