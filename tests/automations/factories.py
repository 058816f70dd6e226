import factory
from django.utils import timezone

from automations.models import Automation, AutomationRun
from tests.factories import OrganizationFactory


def welcome_email(**changes) -> dict:
    data = {"to": "learner", "subject": "Welcome!", "body": "Glad to have you."}
    return {"type": "send_email", "input": {**data, **changes}}


class AutomationFactory(factory.django.DjangoModelFactory):
    """A valid automation (saved as is; the registry's validation has its own tests)."""

    class Meta:
        model = Automation

    org = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"Automation {n}")
    description = "Greets new learners."
    trigger = "enrollment.created"
    actions = factory.LazyFunction(lambda: [welcome_email()])
    enabled = True


def make_run(automation, **fields) -> AutomationRun:
    """A run of ``automation`` for a new event, due now; ``fields`` override any column."""
    now = timezone.now()
    values = {
        "org": automation.org,
        "automation": automation,
        "trigger": automation.trigger,
        "occurred_at": now,
        "event_data": {"email": "a@example.com"},
        "revision_id": automation.revision_id,
        "due_at": now,
        **fields,
    }
    values["event_id"] = values.get("event_id") or AutomationRun().id
    return AutomationRun.objects.create(**values)


def editor_fields(actions: list[dict], name: str = "actions") -> dict[str, str]:
    """``actions`` as the admin's actions editor posts them: one row per action, each input
    field as text (headers one "Name: value" a line)."""
    data = {f"{name}-TOTAL_FORMS": str(len(actions))}
    for index, action in enumerate(actions):
        kind = action["type"]
        data[f"{name}-{index}-type"] = kind
        for key, value in action.get("input", {}).items():
            if isinstance(value, dict):
                value = "\n".join(f"{k}: {v}" for k, v in value.items())
            data[f"{name}-{index}-{kind}-{key}"] = value
    return data
