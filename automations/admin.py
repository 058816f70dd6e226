from django.contrib import admin

from automations.admin_forms import AutomationForm
from automations.models import Automation
from automations.services import save_automation
from learn.models import Course
from lms.admin import OrgScopedAdmin, admin_org_ids


@admin.register(Automation)
class AutomationAdmin(OrgScopedAdmin):
    form = AutomationForm
    list_display = ["name", "org", "trigger", "action_count", "enabled", "updated_at"]
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
