"""OpenAPI: an automation's create and update, typed for generated clients and fuzzers.

Each action type of the registry is a named schema (``SendEmailAction``, ``WebhookAction``,
...) whose ``type`` has one value, and the list's items are ``oneOf`` them with ``type`` as
the discriminator: a client generated from the schema gets one class per action type.

A write's body is one named schema per trigger (``EnrollmentCreatedAutomationRequest``,
...) whose ``trigger`` has one value and whose ``conditions`` take only the keys that
trigger takes (``Trigger.conditions``) and whose actions address only the roles it has
(``Trigger.recipients``: "inviter" only when an invite is accepted), so that no body the
schema accepts holds a condition or a recipient its trigger cannot use. A create's body is
``oneOf`` them, ``trigger`` the discriminator; a change's (every field optional,
``trigger`` too) is ``anyOf`` their patched forms
(``PatchedEnrollmentCreatedAutomationRequest``, ...): with ``trigger`` it has that trigger's
shape, and without it the stored trigger judges the conditions, as its
description says. Adding a trigger or a condition to the registry changes them all.
"""

from copy import deepcopy

from drf_spectacular.extensions import OpenApiSerializerExtension, OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import ResolvedComponent, is_patched_serializer

from automations.registry import (
    ACTION_TYPES,
    MAX_ACTIONS,
    TRIGGERS,
    Trigger,
    conditions_schema,
)

KEPT = (
    " What a change leaves out is kept and judges the rest: without `trigger`, its "
    "`conditions` are those the stored trigger takes; without `conditions`, the stored ones "
    "must suit the `trigger` sent."
)


def actions_schema(auto_schema, trigger: Trigger | None = None) -> dict:
    """The action list: items ``oneOf`` the action types' named schemas, ``type`` the
    discriminator. With ``trigger``, an action type whose schema that trigger narrows
    (``send_email``'s ``to``: the roles it has) is that trigger's own named schema
    (``EnrollmentCreatedSendEmailAction``)."""
    mapping = {}
    for action in ACTION_TYPES.values():
        name, schema = action.schema_name, action.json_schema()
        if trigger is not None and action.varies_by_trigger(trigger):
            name, schema = trigger.schema_name + action.schema_name, action.json_schema(trigger)
            schema["title"] = name
        # ``type``'s one value is one named enum, whichever trigger's schema holds it.
        schema["properties"]["type"] = _component(
            auto_schema, f"{action.schema_name}TypeEnum", schema["properties"]["type"]
        )
        mapping[action.name] = _component(auto_schema, name, schema)["$ref"]
    return {
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_ACTIONS,
        "items": {
            "oneOf": [{"$ref": ref} for ref in mapping.values()],
            "discriminator": {"propertyName": "type", "mapping": mapping},
        },
    }


def _component(auto_schema, name: str, schema: dict) -> dict:
    """A reference to the named schema ``name`` (registered once)."""
    component = ResolvedComponent(
        name=name, type=ResolvedComponent.SCHEMA, object=name, schema=schema
    )
    auto_schema.registry.register_on_missing(component)
    return component.ref


class ActionsInputFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "automations.serializers.ActionsInputField"

    def map_serializer_field(self, auto_schema, direction):
        return actions_schema(auto_schema)


class AutomationWriteExtension(OpenApiSerializerExtension):
    target_class = "automations.serializers.AutomationWriteSerializer"

    def map_serializer(self, auto_schema, direction):
        whole = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        patched = is_patched_serializer(self.target, direction)
        prefix = "Patched" if patched else ""
        mapping = {}
        for trigger in TRIGGERS.values():
            name = f"{prefix}{trigger.schema_name}AutomationRequest"
            schema = deepcopy(whole)
            fields = schema["properties"]
            schema["description"] = f"An automation that {trigger.name} runs."
            fields["trigger"] = {
                "type": "string",
                "enum": [trigger.name],
                "description": trigger.description,
            }
            fields["conditions"] = {
                **conditions_schema(trigger.conditions),
                "description": fields["conditions"]["description"],
            }
            fields["actions"] = {
                **actions_schema(auto_schema, trigger),
                "description": fields["actions"].get("description", ""),
            }
            mapping[trigger.name] = _component(auto_schema, name, schema)["$ref"]
        variants = [{"$ref": ref} for ref in mapping.values()]
        if patched:
            # ``trigger`` is optional, so no discriminator: a body without it meets every
            # shape whose conditions it fits.
            return {"description": whole["description"] + KEPT, "anyOf": variants}
        return {
            "description": whole["description"],
            "oneOf": variants,
            "discriminator": {"propertyName": "trigger", "mapping": mapping},
        }
