"""Request-body fields that take JSON values as the schema types them, without coercion.

DRF's fields coerce: CharField takes ``0`` as ``"0"``, IntegerField takes ``"5"`` and
``5.0``, UUIDField takes integers (``true`` too, since bool is an int) and braced, URN or
unhyphenated spellings. The OpenAPI schema says ``type: string`` / ``integer`` /
``format: uuid``, so a body value of another JSON type must be a 400 ``validation_error``
naming the field, as the contract says (``{"assetId": 1}`` would otherwise become
``00000000-0000-0000-0000-000000000001`` and answer 404).

Use them for fields of JSON request bodies. Query parameters arrive as strings, so their
serializers keep DRF's own fields.
"""

from rest_framework import serializers

from lms.ids import parse_id


class StrictUUIDField(serializers.UUIDField):
    """A UUID string in its hyphenated form, nothing else."""

    def to_internal_value(self, data):
        parsed = parse_id(data) if isinstance(data, str) else None
        if parsed is None:
            self.fail("invalid", value=data)
        return parsed


class StrictCharField(serializers.CharField):
    """A JSON string, never a number or a boolean turned into one."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer, never a boolean, a string or a float."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)
