"""Request-body fields that take JSON values as the schema types them, without coercion.

DRF's fields coerce: CharField takes ``0`` as ``"0"``, IntegerField takes ``"5"`` and
``5.0``, UUIDField takes integers (``true`` too, since bool is an int) and braced, URN or
unhyphenated spellings. The OpenAPI schema says ``type: string`` / ``integer`` /
``format: uuid``, so a body value of another JSON type must be a 400 ``validation_error``
naming the field, as the contract says (``{"assetId": 1}`` would otherwise become
``00000000-0000-0000-0000-000000000001`` and answer 404).

Use them for fields of JSON request bodies. Query parameters arrive as strings:
``QueryIntegerField`` reads those.
"""

import re

from django.utils.dateparse import parse_datetime
from rest_framework import serializers
from rest_framework.fields import empty

from lms.ids import parse_id


class StrictUUIDField(serializers.UUIDField):
    """A UUID string in its hyphenated form, nothing else."""

    def to_internal_value(self, data):
        parsed = parse_id(data) if isinstance(data, str) else None
        if parsed is None:
            self.fail("invalid", value=data)
        return parsed


class QueryIdField(StrictUUIDField):
    """An id in a query string; an empty value (``courseId=``) is a value, and no id."""

    def get_value(self, dictionary):
        return query_value(self, dictionary)


def query_value(field: serializers.Field, dictionary):
    """A query parameter's value as sent: DRF reads an empty form value as absent."""
    return dictionary.get(field.field_name, empty)


class QueryChoiceField(serializers.ChoiceField):
    """A choice in a query string: an empty value (``status=``) is a value, and not one of
    the allowed (DRF reads an empty form value as left out)."""

    def get_value(self, dictionary):
        return query_value(self, dictionary)


class QueryTextField(serializers.CharField):
    """Text in a query string, read as given (an empty value is a value)."""

    def get_value(self, dictionary):
        return query_value(self, dictionary)


class StrictCharField(serializers.CharField):
    """A JSON string, never a number or a boolean turned into one."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class JsonIntegerField(serializers.IntegerField):
    """A JSON integer in a body, never a boolean, a string or a float."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class QueryIntegerField(serializers.IntegerField):
    """An integer in a query string: only ASCII digits with an optional leading minus.
    DRF's own IntegerField also takes ``1.0``, ``1_000``, `` 7 `` and other digits, which a
    query parameter should not."""

    _integer = re.compile(r"-?[0-9]+")

    def get_value(self, dictionary):
        # DRF reads an empty form value ("page=") as absent; it is a value, and not a number.
        return query_value(self, dictionary)

    def to_internal_value(self, data) -> int:
        if not isinstance(data, str) or not self._integer.fullmatch(data):
            self.fail("invalid")
        try:
            return int(data)
        except ValueError:  # more digits than Python converts: far out of range anyway
            self.fail("max_string_length")


class JsonBooleanField(serializers.BooleanField):
    """A JSON true or false in a body, never a string or a number read as one."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class JsonTimestampField(serializers.DateTimeField):
    """An ISO 8601 timestamp string with its offset (``Z`` or ``+02:00``), answered in UTC;
    a time without an offset is ambiguous, and a number or a date alone is no timestamp."""

    default_error_messages = {
        "offset": "Give the time with its offset from UTC, e.g. 2027-01-31T17:00:00Z.",
    }

    def to_internal_value(self, value):
        if not isinstance(value, str):
            self.fail("invalid", format="YYYY-MM-DDThh:mm[:ss[.uuuuuu]](Z|+HH:MM|-HH:MM)")
        written = parse_datetime(value.strip())
        if written is not None and written.tzinfo is None:
            self.fail("offset")
        return super().to_internal_value(value)
