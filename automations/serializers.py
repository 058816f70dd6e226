from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from automations.models import Automation
from automations.registry import (
    ACTION_TYPES,
    CONDITIONS,
    EVENT_DATA_SCHEMA,
    TRIGGERS,
    conditions_schema,
)
from lms.fields import JsonBooleanField, StrictCharField
from lms.web.shapes import Shape


# Inline enums: a named component ("TypeEnum") could collide with other apps' choices.
@extend_schema_field({"type": "string", "enum": list(TRIGGERS)})
class TriggerField(serializers.CharField):
    pass


@extend_schema_field({"type": "string", "enum": list(ACTION_TYPES)})
class ActionTypeField(serializers.CharField):
    pass


class ActionSerializer(serializers.Serializer):
    type = ActionTypeField(help_text="The action's type: what it does with its input.")
    input = serializers.DictField(help_text="The action's input, valid against its type.")


@extend_schema_field(ActionSerializer(many=True))
class ActionsField(serializers.JSONField):
    """An automation's actions as stored, documented as a list of ``ActionSerializer``: the
    stored list is what that serializer answers, as validation stores it (each action
    exactly ``{type, input}``, ``registry.normalized_actions``; JSON keys are text)."""


# Every key a trigger takes; a write's body takes only its trigger's (automations/schema.py).
CONDITIONS_SCHEMA = conditions_schema(tuple(CONDITIONS))


@extend_schema_field(CONDITIONS_SCHEMA)
class ConditionsField(serializers.JSONField):
    """Which of the trigger's events run the automation: `{}` for all of them."""


# An automation as the API answers it (no docstring: it would become the schema's
# description); ``AUTOMATION`` builds the same body from a row.
class AutomationSerializer(serializers.Serializer):
    orgId = serializers.UUIDField(source="org_id")
    id = serializers.UUIDField()
    name = serializers.CharField()
    description = serializers.CharField()
    trigger = TriggerField(help_text="The event that runs the automation.")
    actions = ActionsField(help_text="In the order they run.")
    conditions = ConditionsField(
        help_text="Which of the trigger's events run it; `{}`: every one. Ids lower-case."
    )
    enabled = serializers.BooleanField()
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

    class Meta:
        model = Automation  # what AUTOMATION reads its columns from


# The automation's wire shape, declared once: the detail read's columns and its body's
# builder (``lms.web.shapes``).
AUTOMATION = Shape(AutomationSerializer)


@extend_schema_field({"type": "string", "enum": list(TRIGGERS)})
class TriggerInputField(serializers.JSONField):
    pass


class ActionsInputField(serializers.JSONField):
    """Any JSON value, checked by the registry; its schema (a list of actions, one schema per
    action type told apart by ``type``) is automations/schema.py's."""


class CreatedAutomationSerializer(AutomationSerializer):
    signingSecret = serializers.CharField(
        source="signing_secret",
        help_text="Signs this automation's webhooks (Standard Webhooks). Shown this once.",
    )


class SigningSecretSerializer(serializers.Serializer):
    signingSecret = serializers.CharField(
        help_text="The automation's new signing secret (Standard Webhooks), shown this once. "
        "Deliveries carry its signature and the old secret's for "
        "LMS_WEBHOOK_SECRET_OVERLAP_SECONDS (a day by default)."
    )


class AutomationWriteSerializer(serializers.Serializer):
    """An automation to create (or, every field optional, the fields of one to change): the
    event that runs it and its actions, in the order they run. Every problem of the trigger
    and the actions is answered at once, each under its path in `details`
    (`actions.0.input.url`)."""

    # The trigger and actions are checked by the view, against the registry and the
    # organization, once.

    name = StrictCharField(max_length=200)
    description = StrictCharField(max_length=10000, required=False, allow_blank=True)
    # Any JSON value reaches the registry, which names the problem by path.
    trigger = TriggerInputField(
        help_text="The event that runs the automation: "
        + "; ".join(f"`{t.name}`: {t.description.rstrip('.')}" for t in TRIGGERS.values())
    )
    actions = ActionsInputField(
        help_text="In the order they run; each action's `type` says which input it takes."
    )
    conditions = ConditionsField(
        required=False,
        help_text="Which of the trigger's events run it (default `{}`: every one): only the "
        "keys that its trigger takes. Every id is one of the organization's. On a change, "
        "replaces the whole object.",
    )
    enabled = JsonBooleanField(required=False, help_text="Defaults to true.")


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "properties": {
            "status": {"type": "integer"},
            "durationMs": {"type": "integer"},
            "body": {"type": "string", "maxLength": 1024},
        },
    }
)
class ResponseField(serializers.JSONField):
    pass


class RunActionSerializer(serializers.Serializer):
    type = ActionTypeField()
    status = serializers.ChoiceField(
        choices=["pending", "running", "succeeded", "failed", "skipped"]
    )
    attempts = serializers.IntegerField()
    lastError = serializers.CharField(allow_null=True)
    response = ResponseField(help_text="A webhook's answer, else null.")


@extend_schema_field(EVENT_DATA_SCHEMA)
class EventDataField(serializers.DictField):
    """An event's data, typed per trigger in the schema."""


class RunEventSerializer(serializers.Serializer):
    id = serializers.UUIDField(source="event_id")
    type = TriggerField(source="trigger")
    occurredAt = serializers.DateTimeField(source="occurred_at")
    data = EventDataField(
        source="event_data", help_text="The event's data: its trigger's shape (`type`)."
    )
    test = serializers.BooleanField(
        required=False,
        help_text="true on a test send's example event (POST /api/automations/{id}/test); "
        "absent on a real event.",
    )

    def to_representation(self, instance):
        shape = super().to_representation(instance)
        if not shape["test"]:
            del shape["test"]  # a real event's shape is 7.2's, as it always was
        return shape


class AutomationRunSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    automationId = serializers.UUIDField(source="automation_id")
    event = RunEventSerializer(source="*")
    status = serializers.ChoiceField(choices=["pending", "running", "succeeded", "failed"])
    depth = serializers.IntegerField(help_text="0 for a person's act; +1 per automation.")
    actions = RunActionSerializer(many=True, source="outcomes")
    createdAt = serializers.DateTimeField(source="created_at")
    finishedAt = serializers.DateTimeField(source="finished_at", allow_null=True)
