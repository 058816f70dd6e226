"""Ids and timestamps read as the text the API writes, written by the database.

A list that answers rows as they are read (``values_list``, ``lms.db.compiled``) would
otherwise have psycopg parse each UUID and each timestamp into a Python object, only for
the row builder to turn it back into text: for a page of bundles, most of the request's
instructions (docs/performance.md). Read through these expressions, the
database writes the text in the select list and the driver hands over a ``str``:

- ``WireId``: a UUID in its hyphenated lower-case form, as ``str(uuid)`` and DRF's
  ``UUIDField`` write it;
- ``WireTime``: an aware timestamp as DRF's ``DateTimeField`` writes it with
  ``TIME_ZONE = "UTC"`` (``lms.serializers.wire_time``): ISO 8601 in UTC, the microseconds
  only when they are not zero, and ``Z`` for the offset.

``wire_columns`` picks the expression for each column of a model by its field.
``tests/lms/test_wire.py`` checks both against the Python they replace, on every database
we run on. Only reads whose values go straight to the wire use them; code that works with
the values (services, model instances) reads them as Python objects.
"""

from __future__ import annotations

from django.db import NotSupportedError, models
from django.db.models import CharField, Func


class _Wire(Func):
    arity = 1
    output_field = CharField()

    def as_sql(self, compiler, connection, **extra):
        raise NotSupportedError(f"{type(self).__name__} is written for PostgreSQL and SQLite.")


class WireId(_Wire):
    """A UUID column (or a foreign key to one) as hyphenated lower-case text."""

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"({sql})::text", params

    def as_sqlite(self, compiler, connection, **extra):
        # Django stores a UUID in SQLite as its 32 lower-case hex digits.
        sql, params = compiler.compile(self.source_expressions[0])
        parts = [(1, 8), (9, 4), (13, 4), (17, 4), (21, 12)]
        text = " || '-' || ".join(f"substr({sql}, {start}, {length})" for start, length in parts)
        return f"({text})", list(params) * len(parts)


class WireTime(_Wire):
    """A ``DateTimeField`` column as ISO 8601 text in UTC: ``2026-11-24T04:30:00.120000Z``,
    or ``2026-11-24T04:30:00Z`` on a whole second."""

    def as_postgresql(self, compiler, connection, **extra):
        # to_char writes the six digits always, whatever the session's DateStyle and time
        # zone; a fraction of ".000000" is the one isoformat leaves out.
        sql, params = compiler.compile(self.source_expressions[0])
        written = f"""to_char(({sql}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')"""
        return f"(replace({written}, '.000000', '') || 'Z')", params

    def as_sqlite(self, compiler, connection, **extra):
        # Django stores an aware time in SQLite as str() of it in UTC, naive:
        # "YYYY-MM-DD HH:MM:SS[.ffffff]", which is isoformat's text with a space for "T".
        sql, params = compiler.compile(self.source_expressions[0])
        return f"(replace({sql}, ' ', 'T') || 'Z')", params


def wire_columns(
    model: type[models.Model], names: tuple[str, ...], *, through: str | None = None
) -> list[str | Func]:
    """``values_list`` arguments that read ``names`` (attribute names of ``model``'s
    columns) with ids and timestamps as wire text, and every other column as stored.

    ``through``: the columns are read from a queryset of another model, through its foreign
    key of that name to ``model``: its id is the key's own column (no join), its ``org_id``
    the row's own (tenant rows point only at rows of their organization), any other column
    the related row's (``through__name``)."""
    fields = {field.attname: field for field in model._meta.concrete_fields}
    primary_key = model._meta.pk.attname if model._meta.pk else None
    columns: list[str | Func] = []
    for name in names:
        field = fields[name]
        target = field.target_field if field.is_relation else field  # type: ignore[attr-defined]
        path = name
        if through is not None and name != "org_id":
            path = f"{through}_id" if name == primary_key else f"{through}__{name}"
        if isinstance(target, models.UUIDField):
            columns.append(WireId(path))
        elif isinstance(field, models.DateTimeField):
            columns.append(WireTime(path))
        else:
            columns.append(path)
    return columns
