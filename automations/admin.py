from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from automations.admin_forms import AutomationForm
from automations.models import Automation, AutomationRun
from automations.services import save_automation
from learn.admin import ReadOnlyMixin, json_block
from learn.models import Course
from lms.admin import OrgScopedAdmin, admin_org_ids


@admin.register(Automation)
class AutomationAdmin(OrgScopedAdmin):
    form = AutomationForm
    list_display = ["name", "org", "trigger", "action_count", "enabled", "runs", "updated_at"]
    list_filter = ["org", "trigger", "enabled"]
    list_select_related = ["org"]
    search_fields = ["name", "description"]

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

    @admin.display(description="runs")
    def runs(self, obj: Automation):
        """What this automation has done: its runs, newest first, in the run log."""
        url = reverse("admin:automations_automationrun_changelist")
        return format_html('<a href="{}?automation__id__exact={}">Runs</a>', url, obj.pk)

    @admin.display(description="actions")
    def action_count(self, obj: Automation) -> int:
        return len(obj.actions) if isinstance(obj.actions, list) else 0

    def save_model(self, request, obj, form, change):
        save_automation(
            org=obj.org,
            name=obj.name,
            description=obj.description,
            trigger=obj.trigger,
            actions=obj.actions,
            enabled=obj.enabled,
            instance=obj,
        )


@admin.register(AutomationRun)
class AutomationRunAdmin(ReadOnlyMixin, OrgScopedAdmin):
    """What happened: each run with its event and every action's outcome. Written by the
    worker alone; staff look (``manage.py retry_automation_run`` starts a failed one again)."""

    list_display = ["created_at", "automation", "trigger", "status", "depth", "finished_at"]
    list_filter = ["org", "automation", "status", "trigger"]
    list_select_related = ["automation"]
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
        "actions_json",
        "created_at",
        "due_at",
        "finished_at",
    ]
    readonly_fields = fields

    @admin.display(description="event data")
    def event_json(self, obj: AutomationRun):
        return json_block(obj.event_data)

    @admin.display(description="actions")
    def actions_json(self, obj: AutomationRun):
        return json_block(obj.actions)
