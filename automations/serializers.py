from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from automations.registry import ACTION_TYPES, TRIGGERS


# Inline enums: a named component ("TypeEnum") could collide with other apps' choices.
@extend_schema_field({"type": "string", "enum": list(TRIGGERS)})
class TriggerField(serializers.CharField):
    pass


@extend_schema_field({"type": "string", "enum": list(ACTION_TYPES)})
class ActionTypeField(serializers.CharField):
    pass


class ActionSerializer(serializers.Serializer):
    type = ActionTypeField(help_text="An action type of the registry.")
    input = serializers.DictField(help_text="The action's input, valid against its type.")


class AutomationSerializer(serializers.Serializer):
    orgId = serializers.UUIDField(source="org_id")
    id = serializers.UUIDField()
    name = serializers.CharField()
    description = serializers.CharField()
    trigger = TriggerField(help_text="A trigger of the registry.")
    actions = ActionSerializer(many=True, help_text="In the order they run.")
    enabled = serializers.BooleanField()
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")
