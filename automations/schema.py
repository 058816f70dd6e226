"""OpenAPI: the actions of an automation's create and update, typed for generated clients.

Each action type of the registry is a named schema (``SendEmailAction``, ``WebhookAction``,
...) whose ``type`` has one value, and the list's items are ``oneOf`` them with ``type`` as
the discriminator: a client generated from the schema gets one class per action type.
"""

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import ResolvedComponent

from automations.registry import ACTION_TYPES, MAX_ACTIONS


class ActionsInputFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "automations.serializers.ActionsInputField"

    def map_serializer_field(self, auto_schema, direction):
        mapping = {}
        for action in ACTION_TYPES.values():
            component = ResolvedComponent(
                name=action.schema_name,
                type=ResolvedComponent.SCHEMA,
                object=action.schema_name,
                schema=action.json_schema(),
            )
            auto_schema.registry.register_on_missing(component)
            mapping[action.name] = component.ref["$ref"]
        return {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_ACTIONS,
            "items": {
                "oneOf": [{"$ref": ref} for ref in mapping.values()],
                "discriminator": {"propertyName": "type", "mapping": mapping},
            },
        }
