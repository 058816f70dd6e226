"""A hot wire shape declared once: by its output serializer.

A read on a hot path answers rows (``values_list``, ``lms.db.compiled``), not model
instances, and builds each body without a serializer per row. What a body holds is still
declared in one place, the serializer the OpenAPI schema documents; ``Shape`` derives the
rest from it::

    LINK = Shape(DownloadAssetSerializer)       # Meta.model: DownloadAsset
    rows = queryset.values_list(*LINK.columns)  # ids and timestamps read as wire text
    bodies = LINK.bodies(rows)                  # what DownloadAssetSerializer answers

- ``sources``: each field's ``source`` (attribute names of the model's columns), in the
  serializer's order; ``columns``: the ``values_list`` arguments that read them with ids
  and timestamps as the text the API writes (``lms.db.wire``).
- ``body(row)``: the body of a row read through ``columns``; ``body_of(row)``: of a row
  holding the same values as Python objects (a ``UUID``, an aware ``datetime``), such as
  the rows a write has in hand; ``bodies``, ``bodies_of``: a list of them.
- ``record``: a named tuple of ``sources``, for code that works with such rows, or that
  composes an answer by name (a course's outline: ``record(id=..., title=..., ...)``).

A field added to the model changes nothing here; a field added to the serializer is read,
answered and documented at once. The builders are generated Python (as ``dataclasses``
generates ``__init__``): a dict display per row, as fast as one written by hand. Only
fields whose representation of a stored value is the value itself (text, numbers, booleans,
JSON) or its wire text (UUIDs, timestamps) can be built so; any other field fails at import
with ``ImproperlyConfigured`` saying what to do. ``tests/lms/test_shapes.py`` holds the
bodies to the serializers'.

A ``Shape`` of a plain serializer (no ``Meta.model``) builds bodies from objects whose
attributes are the fields' sources, nested serializers included: the composed answers (a
course's outline) whose values a read wrote as wire text already, and model instances (an
invite).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, Literal

from django.core.exceptions import ImproperlyConfigured
from rest_framework import serializers

from lms.db.wire import wire_columns
from lms.serializers import wire_time

# Fields whose representation of a stored value is the value itself.
_AS_STORED = (
    serializers.CharField  # EmailField and the other text fields
    | serializers.IntegerField
    | serializers.FloatField
    | serializers.BooleanField
    | serializers.JSONField
    | serializers.ChoiceField
)
# Fields written as text the database can write too (``lms.db.wire``).
_AS_TEXT = serializers.UUIDField | serializers.DateTimeField


def _text(value: Any) -> Any:
    """A UUID or an aware time as wire text; text (read as wire text already) and None as
    they are."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime):
        return wire_time(value)
    return str(value)


def _builder(
    serializer: serializers.Serializer,
    *,
    access: Literal["positions", "attributes"],
    python_values: bool,
    label: str,
) -> Callable[[Any], dict]:
    """Generates ``body(row)`` for ``serializer``'s fields (see the module's docstring)."""
    namespace: dict[str, Any] = {"_text": _text, "_time": wire_time}
    items = []
    for position, (name, field) in enumerate(serializer.fields.items()):
        if access == "positions":
            value = f"row[{position}]"
        else:
            if not str(field.source).isidentifier():
                raise ImproperlyConfigured(f"{label}.{name}: a source must be one attribute.")
            value = f"row.{field.source}"
        if isinstance(field, serializers.ListSerializer):
            nested = f"_nested_{position}"
            child: Any = field.child  # a serializer: Shape reads nested serializers only
            namespace[nested] = _builder(
                child, access="attributes", python_values=python_values, label=label
            )
            items.append(f"{name!r}: [{nested}(item) for item in {value}]")
        elif isinstance(field, _AS_TEXT) and python_values:
            if field.allow_null:
                items.append(f"{name!r}: _text({value})")
            elif isinstance(field, serializers.UUIDField):
                items.append(f"{name!r}: str({value})")
            else:
                items.append(f"{name!r}: _time({value})")
        elif isinstance(field, _AS_TEXT | _AS_STORED):  # as read (wire text) or as stored
            items.append(f"{name!r}: {value}")
        else:
            raise ImproperlyConfigured(
                f"{label}.{name} is a {type(field).__name__}, which a Shape cannot build from"
                " a stored value: declare it as a field answering the stored value (a"
                " JSONField with extend_schema_field for its schema), or answer this body"
                " through the serializer."
            )
    source = f"def body(row):\n    return {{{', '.join(items)}}}\n"
    exec(source, namespace)  # generated from the serializer's field names, at import
    return namespace["body"]


class Shape:
    """The wire shape ``serializer_class`` declares (see the module's docstring)."""

    def __init__(self, serializer_class: type[serializers.Serializer]) -> None:
        serializer = serializer_class()
        self.serializer_class = serializer_class
        self.model = getattr(getattr(serializer_class, "Meta", None), "model", None)
        self.names = tuple(serializer.fields)
        self.sources = tuple(str(field.source) for field in serializer.fields.values())
        access: Literal["positions", "attributes"] = (
            "positions" if self.model is not None else "attributes"
        )
        label = serializer_class.__name__
        self.body = _builder(serializer, access=access, python_values=False, label=label)
        self.body_of = _builder(serializer, access=access, python_values=True, label=label)
        if self.model is not None:
            columns = {field.attname for field in self.model._meta.concrete_fields}
            strange = [source for source in self.sources if source not in columns]
            if strange:
                raise ImproperlyConfigured(
                    f"{label} answers {', '.join(strange)}, which are not columns of"
                    f" {self.model._meta.label}: a Shape reads columns only (give the field"
                    " a source that is one, or answer this body through the serializer)."
                )
            self.columns = tuple(wire_columns(self.model, self.sources))
        name = f"{self.model.__name__}Row" if self.model else label.removesuffix("Serializer")
        self.record: Any = namedtuple(name, self.sources)  # type: ignore[misc]

    def bodies(self, rows: Iterable[Any]) -> list[dict]:
        """``body`` of each row (read through ``columns``)."""
        body = self.body
        return [body(row) for row in rows]

    def bodies_of(self, rows: Iterable[Any]) -> list[dict]:
        """``body_of`` of each row (Python values)."""
        body = self.body_of
        return [body(row) for row in rows]
