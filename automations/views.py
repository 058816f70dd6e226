from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from automations.models import Automation
from automations.serializers import AutomationSerializer
from lms.output import Output
from lms.tenancy import OrgScopedViewMixin, get_or_404
from organizations.permissions import IsOrgAdmin

AUTOMATION = Output(AutomationSerializer)


class AutomationDetailView(OrgScopedViewMixin, APIView):
    model = Automation
    permission_classes = [IsOrgAdmin]
    omit_error_statuses = ("400", "429")  # no body to validate, no throttle

    @extend_schema(
        operation_id="read_automation",
        summary="Read an automation (owner, admin)",
        responses={200: AutomationSerializer},
    )
    def get(self, request, id):  # the interface names the path parameter "id"
        automation = get_or_404(self.scoped(), id=id)
        return Response(AUTOMATION.one(automation))
