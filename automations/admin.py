from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import admin, messages
from django.db.models import Count, F, IntegerField, OuterRef, Subquery, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce
from django.http import Http404, HttpResponseRedirect
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from automations.admin_forms import AutomationForm
from automations.delivery import BODY_CHARACTERS
from automations.models import Automation, AutomationRun, AutomationRunAction
from automations.services import retry_run, rotate_secret, save_automation, send_test
from learn.api import Course
from lms.admin import OrgScopedAdmin, ReadOnlyMixin, admin_org_ids, json_block
from lms.errors import ApiError, Throttled
from organizations.api import Membership

# What a run page shows of a receiver's answer (CONTRACT 8.8: as much as a delivery keeps)
# and a list of an error.
BODY_PREVIEW = BODY_CHARACTERS
ERROR_PREVIEW = 120
# A header whose value is a credential by its name: masked on run pages (CONTRACT 8.8).
CREDENTIAL_HEADER = re.compile(r"^authorization$|token|secret|key|signature", re.IGNORECASE)
MASK = "••••••••"
RECENT = timedelta(days=7)


def masked_headers(headers) -> list[tuple[str, str]]:
    """A webhook's headers as (name, value) to show, a credential's value masked whole."""
    if not isinstance(headers, dict):
        return []
    return [
        (str(name), MASK if CREDENTIAL_HEADER.search(str(name)) else str(value))
        for name, value in headers.items()
    ]


def delivery_log(actions: list[dict]) -> list[dict]:
    """Each action of a run (``AutomationRun.actions``) as its run page shows it: what was
    asked (the input, headers masked) and what happened (status, attempts, the receiver's
    answer: its code, duration and the first 1,024 characters of its body, the last error)."""
    log = []
    for number, action in enumerate(actions, start=1):
        data = action.get("input") if isinstance(action.get("input"), dict) else {}
        response = action.get("response") if isinstance(action.get("response"), dict) else {}
        body = response.get("body")
        body = body if isinstance(body, str) else None
        log.append(
            {
                "number": number,
                "type": action.get("type"),
                "status": action.get("status"),
                "attempts": action.get("attempts"),
                "code": response.get("status"),
                "duration_ms": response.get("durationMs"),
                "body": None if body is None else body[:BODY_PREVIEW],
                "cut": body is not None and len(body) > BODY_PREVIEW,
                "last_error": action.get("lastError"),
                "input": [
                    (key, value)
                    for key, value in data.items()
                    if key != "headers" and not isinstance(value, dict | list)
                ],
                "headers": masked_headers(data.get("headers")),
            }
        )
    return log


def _recent_runs(status: str) -> Subquery:
    """How many runs of the automation ended with ``status`` in the last 7 days (one scalar
    subquery on the index of an automation's newest runs)."""
    since = timezone.now() - RECENT
    counted = (
        AutomationRun.all_orgs.filter(
            org_id=OuterRef("org_id"),
            automation_id=OuterRef("pk"),
            created_at__gte=since,
            status=status,
        )
        .order_by()
        .values("automation_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


@admin.register(Automation)
class AutomationAdmin(OrgScopedAdmin):
    form = AutomationForm
    list_display = [
        "name",
        "org",
        "trigger",
        "action_count",
        "enabled",
        "succeeded_recently",
        "failed_recently",
        "runs",
        "updated_at",
    ]
    list_filter = ["org", "trigger", "enabled"]
    list_select_related = ["org"]
    search_fields = ["name", "description"]

    class Media:
        css = {"all": ["automations/admin/runs.css"]}  # the page's buttons

    def get_queryset(self, request):
        """With the last 7 days' succeeded and failed runs: counted in the list's query."""
        return (
            super()
            .get_queryset(request)
            .annotate(
                recent_succeeded=_recent_runs(AutomationRun.Status.SUCCEEDED),
                recent_failed=_recent_runs(AutomationRun.Status.FAILED),
            )
        )

    def _recent_link(self, obj: Automation, status: str, count: int):
        since = (timezone.now() - RECENT).replace(microsecond=0).isoformat()
        query = {"automation__id__exact": obj.pk, "status__exact": status}
        query["created_at__gte"] = since
        url = reverse("admin:automations_automationrun_changelist") + "?" + urlencode(query)
        return format_html('<a href="{}">{}</a>', url, count)

    @admin.display(description="succeeded (7 days)", ordering="recent_succeeded")
    def succeeded_recently(self, obj: Automation):
        return self._recent_link(obj, AutomationRun.Status.SUCCEEDED, obj.recent_succeeded)

    @admin.display(description="failed (7 days)", ordering="recent_failed")
    def failed_recently(self, obj: Automation):
        return self._recent_link(obj, AutomationRun.Status.FAILED, obj.recent_failed)

    def get_urls(self):
        """The buttons of an automation's page (CONTRACT 8.8): POST only, with the admin's
        CSRF check; an automation the staff user may not see is a 404."""
        view = self.admin_site.admin_view
        return [
            path(
                "<path:object_id>/roll-secret/",
                view(require_POST(self.roll_secret_view)),
                name="automations_automation_roll_secret",
            ),
            path(
                "<path:object_id>/send-test/",
                view(require_POST(self.send_test_view)),
                name="automations_automation_send_test",
            ),
            *super().get_urls(),
        ]

    def _own_or_404(self, request, object_id) -> Automation:
        automation = self.get_object(request, object_id)
        if automation is None or not self.has_change_permission(request, automation):
            raise Http404("No such automation.")
        return automation

    def _back_to(self, automation: Automation) -> HttpResponseRedirect:
        return HttpResponseRedirect(
            reverse("admin:automations_automation_change", args=[automation.pk])
        )

    def roll_secret_view(self, request, object_id):
        """A new signing secret, shown this once; the previous one still signs deliveries
        for LMS_WEBHOOK_SECRET_OVERLAP_SECONDS."""
        automation = self._own_or_404(request, object_id)
        secret = rotate_secret(org=automation.org, automation_id=automation.pk)
        hours = settings.LMS_WEBHOOK_SECRET_OVERLAP_SECONDS / 3600
        messages.warning(
            request,
            f"New signing secret of {automation.name} (shown only this once, copy it now; "
            f"deliveries are signed with the previous one too for {hours:g} hours): {secret}",
        )
        return self._back_to(automation)

    def send_test_view(self, request, object_id):
        """A run for an example event of the trigger, marked test, handed to the worker; its
        e-mails go to the staff user who asked."""
        automation = self._own_or_404(request, object_id)
        try:
            # The staff user's membership of the organization is the example's member.
            mine = Membership.all_orgs.filter(org_id=automation.org_id, user=request.user).first()
            run = send_test(
                org=automation.org, automation_id=automation.pk, caller=mine or request.user
            )
        except Throttled as exc:  # the organization's test sends of the last minute
            messages.error(request, exc.message)
            return self._back_to(automation)
        url = reverse("admin:automations_automationrun_change", args=[run.pk])
        messages.success(
            request,
            format_html(
                'A test {} event was sent to {}: <a href="{}">see its run</a>.',
                automation.trigger,
                automation.name,
                url,
            ),
        )
        return self._back_to(automation)

    def get_form(self, request, obj=None, change=False, **kwargs):
        """The course picker offers the staff user's organizations' courses only."""
        form = super().get_form(request, obj, change=change, **kwargs)
        org_ids = admin_org_ids(request)
        courses = Course.all_orgs.select_related("org").order_by("title", "id")
        if obj is not None:
            courses = courses.filter(org_id=obj.org_id)
        elif org_ids is not None:
            courses = courses.filter(org_id__in=org_ids)
        several = org_ids is None or len(org_ids) > 1
        form.course_choices = [
            (str(c.id), f"{c.title} ({c.org.name})" if several else c.title) for c in courses
        ]
        return form

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "runs"] if obj is not None else fields

    def render_change_form(self, request, context, *args, **kwargs):
        """The note above the form counts each problem of the actions, which show beside
        their own inputs, not the actions field once."""
        errors = context.get("errors")
        problems = context["adminform"].form.errors.get("actions") or []
        if errors and len(problems) > 1:
            errors.extend(problems.as_data()[1:])
        return super().render_change_form(request, context, *args, **kwargs)

    @admin.display(description="runs")
    def runs(self, obj: Automation):
        """What this automation has done: its runs, newest first, in the run log."""
        url = reverse("admin:automations_automationrun_changelist")
        return format_html('<a href="{}?automation__id__exact={}">Runs</a>', url, obj.pk)

    @admin.display(description="actions")
    def action_count(self, obj: Automation) -> int:
        return len(obj.actions) if isinstance(obj.actions, list) else 0

    def save_model(self, request, obj, form, change):
        """Saved by the service, as over the API; a new automation's signing secret is
        shown this once (CONTRACT 8.8), as the API's create answers it."""
        save_automation(
            org=obj.org,
            name=obj.name,
            description=obj.description,
            trigger=obj.trigger,
            actions=obj.actions,
            conditions=obj.conditions,
            enabled=obj.enabled,
            instance=obj,
        )
        if not change:
            messages.warning(
                request,
                f"Signing secret of {obj.name} (shown only this once, copy it now; receivers "
                f"verify its webhooks with it): {obj.signing_secret}",
            )


@admin.register(AutomationRun)
class AutomationRunAdmin(ReadOnlyMixin, OrgScopedAdmin):
    """What happened: each run with its event and every action's outcome, as a delivery log
    (``deliveries``: per action its status, attempts, the receiver's answer and the last
    error, credentials in headers masked). Written by the worker alone; staff look, and
    start a failed one again with its page's "Retry" button (as ``manage.py
    retry_automation_run`` does)."""

    list_display = [
        "created_at",
        "automation_name",
        "learner",
        "trigger",
        "status",
        "last_error",
        "depth",
        "finished_at",
    ]
    list_filter = ["org", "automation", "status", "trigger", "created_at"]
    search_fields = ["automation__name", "event_data__email"]
    ordering = ["-created_at", "-id"]
    fields = [
        "org",
        "automation",
        "trigger",
        "event_id",
        "occurred_at",
        "event_json",
        "depth",
        "status",
        "deliveries",
        "created_at",
        "due_at",
        "finished_at",
    ]
    readonly_fields = fields

    class Media:
        css = {"all": ["automations/admin/runs.css"]}

    def get_queryset(self, request):
        """The list's columns are read in its one query: the automation's name, the
        learner's e-mail from the event, and the last error of the run's actions."""
        last_error = (
            AutomationRunAction.all_orgs.filter(org_id=OuterRef("org_id"), run_id=OuterRef("pk"))
            .exclude(last_error="")
            .order_by("-index")
            .values("last_error")[:1]
        )
        return (
            super()
            .get_queryset(request)
            .annotate(
                automation_name=F("automation__name"),
                learner_email=KT("event_data__email"),
                last_error_text=Subquery(last_error),
            )
        )

    def get_urls(self):
        return [
            path(
                "<path:object_id>/retry/",
                self.admin_site.admin_view(require_POST(self.retry_view)),
                name="automations_automationrun_retry",
            ),
            *super().get_urls(),
        ]

    def retry_view(self, request, object_id):
        """Run a failed run again from its first action that did not succeed (CONTRACT
        8.8); a run that is not failed is said so, and stays as it is."""
        run = self.get_object(request, object_id)
        if run is None or not self.has_view_permission(request, run):
            raise Http404("No such run.")
        try:
            retry_run(org=run.org, automation_id=run.automation_id, run_id=run.pk)
        except ApiError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, "The run was started again.")
        return HttpResponseRedirect(
            reverse("admin:automations_automationrun_change", args=[run.pk])
        )

    def render_change_form(self, request, context, *args, obj=None, **kwargs):
        if obj is not None:
            context["can_retry"] = obj.status == AutomationRun.Status.FAILED
            learner = f" for {obj.learner_email}" if obj.learner_email else ""
            context["subtitle"] = f"{obj.automation_name}: {obj.trigger} run{learner}"
        return super().render_change_form(request, context, *args, obj=obj, **kwargs)

    @admin.display(description="automation", ordering="automation__name")
    def automation_name(self, obj: AutomationRun) -> str:
        return obj.automation_name

    @admin.display(description="learner", ordering="learner_email")
    def learner(self, obj: AutomationRun) -> str:
        return obj.learner_email or "-"

    @admin.display(description="last error")
    def last_error(self, obj: AutomationRun) -> str:
        text = obj.last_error_text or ""
        return text if len(text) <= ERROR_PREVIEW else text[: ERROR_PREVIEW - 1] + "…"

    @admin.display(description="event data")
    def event_json(self, obj: AutomationRun):
        return json_block(obj.event_data)

    @admin.display(description="deliveries")
    def deliveries(self, obj: AutomationRun):
        return render_to_string(
            "automations/admin/deliveries.html", {"actions": delivery_log(obj.actions)}
        )
