from django.db.models import Prefetch, prefetch_related_objects
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.views import APIView

from automations import services
from automations.models import Automation, AutomationRun, AutomationRunAction
from automations.serializers import (
    AUTOMATION,
    AutomationRunSerializer,
    AutomationSerializer,
    AutomationWriteSerializer,
    CreatedAutomationSerializer,
    SigningSecretSerializer,
)
from automations.wire_reads import read_automation
from lms.pagination import EnvelopePagination
from lms.tenancy import OrgScopedViewMixin, get_or_404
from lms.web.renderers import rendered
from organizations.api import IsOrgAdmin


class _AdminListView(OrgScopedViewMixin, generics.ListAPIView):
    """An owner's or admin's paged list of the organization's ``model`` rows (those that
    ``rows`` keeps), newest first, without filters."""

    permission_classes = [IsOrgAdmin]
    pagination_class = EnvelopePagination
    filter_backends: list = []

    def rows(self):
        return self.scoped()

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no caller
            return self.model.objects.none()
        return self.rows().order_by("-created_at", "-id")


# Bodies as a client writes them, for the schema (and the Swagger UI's "Try it out").
A_WEBHOOK = OpenApiExample(
    "Webhook",
    summary="Tell another system about each enrolment",
    value={
        "name": "Enrolments to the CRM",
        "description": "Posts every new enrolment to the CRM.",
        "trigger": "enrollment.created",
        "actions": [
            {
                "type": "webhook",
                "input": {
                    "url": "https://crm.example.com/hooks/lms-enrolments",
                    "headers": {"X-Source": "lms"},
                },
            }
        ],
        "enabled": True,
    },
    request_only=True,
)
AN_EMAIL = OpenApiExample(
    "Email",
    summary="Congratulate a learner who completes a course",
    value={
        "name": "Course completed: congratulations",
        "trigger": "course.completed",
        "actions": [
            {
                "type": "send_email",
                "input": {
                    "to": "learner",
                    "subject": "Well done!",
                    "body": "You completed the course. Your certificate is on its way.",
                },
            }
        ],
    },
    request_only=True,
)
GUIDE = "See Automations in the [API guide](/api/docs/guide)."


class AutomationListView(_AdminListView):
    """GET and POST /api/automations (CONTRACT 7.1): owner, admin."""

    model = Automation
    serializer_class = AutomationSerializer
    omit_error_statuses = ("404", "429")

    @property
    def error_statuses(self) -> tuple[str, ...]:
        # A create whose name is taken: 409 conflict naming name (CONTRACT 7.1).
        method = getattr(getattr(self, "request", None), "method", "GET")
        return ("409",) if method == "POST" else ()

    @extend_schema(
        operation_id="list_automations",
        summary="List automations (owner, admin), newest first",
        description="The organization's automations, newest first, a page at a time. "
        "Roles: owner, admin.",
        responses=AutomationSerializer(many=True),
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="create_automation",
        summary="Create an automation (owner, admin); its signing secret is shown this once",
        description="Creates an automation of the caller's organization from its trigger and "
        "its actions. The answer carries `signingSecret`, which signs its webhooks and is "
        f"shown only in this answer. Roles: owner, admin. {GUIDE}",
        request=AutomationWriteSerializer,
        examples=[A_WEBHOOK, AN_EMAIL],
        responses={201: CreatedAutomationSerializer},
    )
    def post(self, request):
        body = AutomationWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        definition = services.definition_or_error(
            org_id=self.org.id,
            trigger=data["trigger"],
            actions=data["actions"],
            conditions=data.get("conditions", {}),
        )
        automation = services.create_automation(
            org=self.org,
            name=data["name"],
            description=data.get("description", ""),
            definition=definition,
            enabled=data.get("enabled", True),
        )
        response = Response(CreatedAutomationSerializer(automation).data, status=201)
        response["Cache-Control"] = "no-store"
        return response


class AutomationDetailView(OrgScopedViewMixin, APIView):
    model = Automation
    permission_classes = [IsOrgAdmin]

    @property
    def omit_error_statuses(self) -> tuple[str, ...]:
        # No throttle; a body to validate only on PATCH.
        method = getattr(getattr(self, "request", None), "method", "GET")
        return ("429",) if method == "PATCH" else ("400", "429")

    @property
    def error_statuses(self) -> tuple[str, ...]:
        # A rename to a taken name: 409 conflict naming name (CONTRACT 7.1).
        method = getattr(getattr(self, "request", None), "method", "GET")
        return ("409",) if method == "PATCH" else ()

    @extend_schema(
        operation_id="read_automation",
        summary="Read an automation (owner, admin)",
        description="Roles: owner, admin. An automation of another organization is not found.",
        responses={200: AutomationSerializer},
    )
    def get(self, request, id):  # the interface names the path parameter "id"
        row = read_automation(org_id=self.org.id, automation_id=id)
        return rendered(request, AUTOMATION.body(row))

    @extend_schema(
        operation_id="update_automation",
        summary="Change an automation (owner, admin): the fields sent",
        description="Changes only the fields sent; `actions`, when sent, replaces the whole "
        f"list. Roles: owner, admin. {GUIDE}",
        request=AutomationWriteSerializer(partial=True),
        examples=[
            OpenApiExample(
                "Webhook",
                summary="Point the webhook at another address",
                value={"actions": A_WEBHOOK.value["actions"]},
                request_only=True,
            ),
            OpenApiExample(
                "Email",
                summary="Change the e-mail and turn the automation on",
                value={"actions": AN_EMAIL.value["actions"], "enabled": True},
                request_only=True,
            ),
        ],
        responses={200: AutomationSerializer},
    )
    def patch(self, request, id):
        body = AutomationWriteSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        automation = services.update_automation(
            org=self.org,
            automation_id=id,
            changes=body.validated_data,
        )
        return Response(AutomationSerializer(automation).data)

    @extend_schema(
        operation_id="delete_automation",
        summary="Delete an automation and its runs (owner, admin)",
        description="Roles: owner, admin.",
        responses={204: None},
    )
    def delete(self, request, id):
        services.delete_automation(org=self.org, automation_id=id)
        return Response(status=204)


class AutomationRunListView(_AdminListView):
    """GET /api/automations/{id}/runs (CONTRACT 7.1): owner, admin; newest first."""

    model = AutomationRun
    serializer_class = AutomationRunSerializer
    omit_error_statuses = ("429",)

    def rows(self):
        # The revision's types, not its inputs: a page never reads the actions' inputs.
        return (
            self.scoped()
            .filter(automation_id=self.kwargs["id"])
            .select_related("revision")
            .defer("revision__actions")
        )

    def paginate_queryset(self, queryset):
        """The page's runs with their actions' rows: one query more, whatever the page."""
        page = super().paginate_queryset(queryset)
        prefetch_related_objects(
            page or [],
            Prefetch("action_states", queryset=AutomationRunAction.objects.for_org(self.org)),
        )
        return page

    @extend_schema(
        operation_id="list_automation_runs",
        summary="An automation's runs (owner, admin), newest first",
        description="What each event did: the run's status and each action's attempts, "
        f"error and (for a webhook) answer, newest first, a page at a time. Roles: owner, "
        f"admin. {GUIDE}",
        responses=AutomationRunSerializer(many=True),
    )
    def get(self, request, id):
        get_or_404(Automation.objects.for_org(self.org).only("id"), id=id)
        return super().get(request, id=id)


class _AutomationOperationView(OrgScopedViewMixin, APIView):
    """A POST on one automation (owner, admin) that takes no body: a body sent is ignored,
    so the only errors are the caller's (401, 403) and a missing record (404)."""

    model = Automation
    permission_classes = [IsOrgAdmin]
    omit_error_statuses = ("400", "429")


class AutomationRotateSecretView(_AutomationOperationView):
    """POST /api/automations/{id}/rotate-secret (CONTRACT 8.8)."""

    @extend_schema(
        operation_id="rotate_automation_secret",
        summary="Roll an automation's signing secret (owner, admin); the new one is shown once",
        description="Issues a new signing secret and answers it this once. For "
        "`LMS_WEBHOOK_SECRET_OVERLAP_SECONDS` (a day by default) deliveries carry two "
        "signatures in `webhook-signature`, space-separated (`v1,<new> v1,<old>`), so a "
        f"receiver can switch without refusing a delivery. Roles: owner, admin. {GUIDE}",
        request=None,
        responses={200: SigningSecretSerializer},
    )
    def post(self, request, id):
        secret = services.rotate_secret(org=self.org, automation_id=id)
        response = Response({"signingSecret": secret})
        response["Cache-Control"] = "no-store"
        return response


class AutomationTestView(_AutomationOperationView):
    """POST /api/automations/{id}/test (CONTRACT 8.8)."""

    @extend_schema(
        operation_id="test_automation",
        summary="Send a test event to an automation (owner, admin)",
        description="Records a run of the automation for an example event of its trigger "
        "(`event.test` true; `event.data` an example of the trigger's data, the caller as "
        "the member) and answers it with `202`; the worker executes it like any other, "
        "whether the automation is enabled or not. Its `send_email` actions write to the "
        "caller, never to a learner or the action's address; its `enroll_in_course` "
        f"actions are `skipped`. Roles: owner, admin. {GUIDE}",
        request=None,
        responses={202: AutomationRunSerializer},
    )
    def post(self, request, id):
        run = services.send_test(org=self.org, automation_id=id, caller=request.auth)
        return Response(AutomationRunSerializer(run).data, status=202)


class AutomationRunRetryView(_AutomationOperationView):
    """POST /api/automations/{id}/runs/{runId}/retry (CONTRACT 8.8)."""

    @property
    def error_statuses(self) -> tuple[str, ...]:
        return ("409",)  # the run is not failed

    @extend_schema(
        operation_id="retry_automation_run",
        summary="Retry a failed run (owner, admin) from its first action that did not succeed",
        description="A `failed` run runs again from its first action that did not succeed, "
        "with fresh attempts; the actions that succeeded are not repeated, and each webhook "
        "keeps its `webhook-id`. Answers `202` with the run, `pending` again. A run that is "
        f"not `failed`: `409 conflict`. Roles: owner, admin. {GUIDE}",
        request=None,
        responses={202: AutomationRunSerializer},
    )
    def post(self, request, id, runId):  # the path names it runId
        run = services.retry_run(org=self.org, automation_id=id, run_id=runId)
        return Response(AutomationRunSerializer(run).data, status=202)
