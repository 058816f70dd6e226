"""Writes of tenant rows whose SQL never changes shape, written out instead of built by the
ORM on every call.

``Model.save``, ``bulk_create`` and a queryset's ``delete`` build and compile their
statement on every call (about a million instructions each for a small row), and run each
field's ``pre_save``. On the hot write paths (a download's link and unlink, a progress
report) the statement is always the same, so it is written here from the model's own
fields: table and column names quoted by the connection, and every value converted by its
field's ``get_db_prep_save``, so the statements run on PostgreSQL and SQLite alike. On
PostgreSQL each is prepared on its connection, so the database plans it once.

Like every query of tenant rows, ``update`` and ``delete`` name the organization as well as
the primary key. ``insert`` takes every column, so the caller gives what the model's defaults
would make (a UUIDv7 id, the timestamps): nothing is filled in behind its back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connections, router
from django.db.models import Model

from lms.compiled import preparing_cursor


def _target(model: type[Model]):
    connection = connections[router.db_for_write(model)]
    return connection, model._meta, connection.ops.quote_name


def _run(connection, sql: str, params: list) -> int:
    # Prepared on PostgreSQL (``lms.compiled.preparing_cursor``): a write of one row by its
    # keys, or of given values, plans the same whatever the values.
    with preparing_cursor(connection) as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _one_row(meta, quote) -> str:
    """The condition naming one tenant row: its organization and primary key."""
    return f"{quote(meta.get_field('org').column)} = %s AND {quote(meta.pk.column)} = %s"


def _one_row_params(meta, connection, org_id: Any, pk: Any) -> list:
    return [
        meta.get_field("org").get_db_prep_value(org_id, connection),
        meta.pk.get_db_prep_value(pk, connection),
    ]


def insert(model: type[Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """``INSERT`` of ``rows``, each the values of ``columns`` (field names) in order, in one
    statement."""
    rows = list(rows)
    if not rows:
        return
    connection, meta, quote = _target(model)
    fields = [meta.get_field(name) for name in columns]
    row_sql = f"({', '.join(['%s'] * len(fields))})"
    _run(
        connection,
        f"INSERT INTO {quote(meta.db_table)}"
        f" ({', '.join(quote(field.column) for field in fields)})"
        f" VALUES {', '.join([row_sql] * len(rows))}",
        [
            field.get_db_prep_save(value, connection)
            for row in rows
            for field, value in zip(fields, row, strict=True)
        ],
    )


def update(model: type[Model], *, org_id: Any, pk: Any, **values: Any) -> int:
    """``UPDATE`` of one row, by its organization and primary key, setting ``values`` (by
    field name). The number of rows changed (0 or 1)."""
    connection, meta, quote = _target(model)
    fields = [meta.get_field(name) for name in values]
    return _run(
        connection,
        f"UPDATE {quote(meta.db_table)}"
        f" SET {', '.join(f'{quote(field.column)} = %s' for field in fields)}"
        f" WHERE {_one_row(meta, quote)}",
        [
            *(
                field.get_db_prep_save(value, connection)
                for field, value in zip(fields, values.values(), strict=True)
            ),
            *_one_row_params(meta, connection, org_id, pk),
        ],
    )


def delete(model: type[Model], *, org_id: Any, pk: Any) -> int:
    """``DELETE`` of one row by its organization and primary key (nothing cascades: for
    rows nothing points at). The number of rows deleted (0 or 1)."""
    connection, meta, quote = _target(model)
    return _run(
        connection,
        f"DELETE FROM {quote(meta.db_table)} WHERE {_one_row(meta, quote)}",
        _one_row_params(meta, connection, org_id, pk),
    )
