from django import forms
from django.contrib import admin

from automations.models import Automation, AutomationRun
from automations.registry import TRIGGERS, schema_text
from automations.services import save_automation
from learn.admin import ReadOnlyMixin, json_block
from lms.admin import OrgScopedAdmin


class AutomationForm(forms.ModelForm):
    """The trigger is offered from the registry but validated, like the actions, only by the
    model's clean(), so both are checked by one rule and each problem is reported once."""

    trigger = forms.CharField(
        widget=forms.Select(choices=[("", "---------")] + [(t, t) for t in TRIGGERS])
    )

    class Meta:
        model = Automation
        fields = ["org", "name", "description", "trigger", "actions", "enabled"]
        widgets = {"actions": forms.Textarea(attrs={"rows": 16, "cols": 100})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["actions"].help_text = (
            'A JSON list, in the order the actions run, of {"type": ..., "input": {...}}.\n'
            + schema_text()
        )
        # A new instance already has its id (UUIDv7 default), so "adding" is the state's;
        # the initial data already holds the model's default (an empty list), so an empty
        # value, not a missing one, is what the template replaces; a value, not JSON text,
        # as the JSON field encodes it for display.
        if not self.is_bound and self.instance._state.adding and not self.initial.get("actions"):
            self.initial["actions"] = [
                {"type": "send_email", "input": {"to": "learner", "subject": "", "body": ""}}
            ]


@admin.register(Automation)
class AutomationAdmin(OrgScopedAdmin):
    form = AutomationForm
    list_display = ["name", "org", "trigger", "action_count", "enabled", "updated_at"]
    list_filter = ["org", "trigger", "enabled"]
    list_select_related = ["org"]
    search_fields = ["name", "description"]

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
