"""Writes of tenant rows whose SQL never changes shape, written out instead of built by the
ORM on every call.

``Model.save``, ``bulk_create`` and a queryset's ``delete`` build and compile their
statement on every call (more than the database spends on a small row; docs/performance.md),
and run each
field's ``pre_save``. On the hot write paths (a download's link and unlink, a progress
report) the statement is always the same, so it is written here from the model's own
fields: table and column names quoted by the connection, and every value converted by its
field's ``get_db_prep_save``, so the statements run on PostgreSQL and SQLite alike. On
PostgreSQL each is prepared on its connection, so the database plans it once.

Like every query of tenant rows, ``update`` and ``delete`` name the organization as well as
the primary key. ``Insert`` writes every concrete column of the model: the ones the caller
gives, and each other one as the model would fill it (its ``default``, called per row when
it is a callable; ``auto_now``/``auto_now_add``: the time; ``db_default`` and an automatic
primary key: left to the database; nullable: NULL). So a field added with a default needs
no change to the hot writes. A column none of that fills fails when the ``Insert`` is made
(a module-level one: at import) with ``ImproperlyConfigured`` naming the model, the field
and what to change.

``shift_down`` moves the rows of an ordered group after a removed one down a position (an
unlink's renumbering) in two statements whatever their number; it names the organization as
well as the group.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import connections, router
from django.db.models import Field, Model
from django.db.models.fields import NOT_PROVIDED, AutoFieldMixin
from django.utils import timezone

from lms.db.compiled import preparing_cursor


def _target(model: type[Model]):
    connection = connections[router.db_for_write(model)]
    return connection, model._meta, connection.ops.quote_name


def _run(connection, sql: str, params: list) -> int:
    # Prepared on PostgreSQL (``lms.db.compiled.preparing_cursor``): a write of one row by its
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


def fillers(
    model: type[Model], given: Iterable[Field], *, by: str
) -> list[tuple[Field, Callable[[], Any]]]:
    """The concrete columns of ``model`` not in ``given``, each with what makes its value
    for a new row as the model would: its ``default`` (a callable called per row), or the
    time for ``auto_now``/``auto_now_add``, or NULL where it is nullable. Left out: a column
    the database fills (``db_default``, an automatic primary key, a generated column).
    ``ImproperlyConfigured`` for a column nothing fills; ``by`` names the statement."""
    meta, taken = model._meta, {field.column for field in given}
    found: list[tuple[Field, Callable[[], Any]]] = []
    for field in meta.concrete_fields:
        if field.column in taken or getattr(field, "generated", False):
            continue
        if field.has_default():
            found.append((field, field.get_default))
        elif field.db_default is not NOT_PROVIDED or isinstance(field, AutoFieldMixin):
            continue
        elif getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            found.append((field, timezone.now))
        elif field.null:
            found.append((field, _none))
        else:
            raise ImproperlyConfigured(
                f"{by} writes every column of {meta.label}, and nothing fills"
                f" {meta.label}.{field.name} ({field.column!r}): give the field a default"
                " (or a db_default, or null=True), or give its value in the columns the"
                " statement writes."
            )
    return found


def _none() -> None:
    return None


class Insert:
    """``INSERT`` into ``model`` of rows, each the values of ``columns`` (field names or
    attnames) in order, every other column filled as the model would (``fillers``).
    Checked when made: a module-level one fails at import when a column cannot be filled.

    ``ignore_conflicts``: a row that breaks a unique constraint is left out (``ON CONFLICT
    DO NOTHING`` on PostgreSQL and SQLite alike). ``batch``: the statement's number of rows
    varies (a write of many rows at once, as one statement whatever their number, where
    ``bulk_create`` splits them into SQLite's batches of 999 variables), so it is not
    prepared: a prepared statement per number of rows would crowd out the hot ones. On
    PostgreSQL a batch sends its rows as one JSON parameter (``jsonb_populate_recordset``),
    so its statement never changes with the number of rows; its values must be what JSON
    writes (text, numbers, booleans, None, JSON documents) or ids and times."""

    def __init__(
        self,
        model: type[Model],
        columns: Sequence[str],
        *,
        ignore_conflicts: bool = False,
        batch: bool = False,
    ):
        meta = model._meta
        self.model = model
        self.given = [meta.get_field(name) for name in columns]
        self.filled = fillers(model, self.given, by=f"statements.Insert({meta.label}, ...)")  # type: ignore[arg-type]
        self.fields = [*self.given, *(field for field, _ in self.filled)]
        self.suffix = " ON CONFLICT DO NOTHING" if ignore_conflicts else ""
        self.batch = batch

    def __call__(self, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if not rows:
            return
        connection, meta, quote = _target(self.model)
        fields, filled = self.fields, self.filled
        row_sql = f"({', '.join(['%s'] * len(fields))})"
        if filled:
            rows = [(*row, *(make() for _, make in filled)) for row in rows]
        into = (
            f"INSERT INTO {quote(meta.db_table)}"
            f" ({', '.join(quote(field.column) for field in fields)})"  # type: ignore[union-attr]
        )
        if self.batch and connection.vendor == "postgresql":
            # The rows as one JSON parameter, read back into the table's row type: one
            # parameter whatever the number of rows (the driver's work on a statement of
            # thousands of parameters, or on arrays of them, costs more than the database's
            # insert). Each value as JSON writes it: ids and times as text, JSON as itself.
            columns = [field.column for field in fields]
            with connection.cursor() as cursor:
                cursor.execute(
                    f"{into} SELECT {', '.join(quote(column) for column in columns)}"
                    f" FROM jsonb_populate_recordset(NULL::{quote(meta.db_table)}, %s::jsonb)"
                    f"{self.suffix}",
                    [
                        json.dumps(
                            [dict(zip(columns, row, strict=True)) for row in rows], default=str
                        )
                    ],
                )
            return
        if not self.batch:
            _run(connection, *self._values(connection, into, row_sql, rows))
            return
        # SQLite takes at most so many parameters a statement (32,766 since 3.32): a batch
        # beyond them is written in as few statements as they allow.
        per = max(1, _variable_limit(connection) // len(fields))
        with connection.cursor() as cursor:
            for start in range(0, len(rows), per):
                cursor.execute(*self._values(connection, into, row_sql, rows[start : start + per]))

    def _values(self, connection, into: str, row_sql: str, rows: list) -> tuple[str, list]:
        """The ``VALUES`` statement of ``rows`` and its parameters."""
        return (
            f"{into} VALUES {', '.join([row_sql] * len(rows))}{self.suffix}",
            [
                field.get_db_prep_save(value, connection)  # type: ignore[union-attr]
                for row in rows
                for field, value in zip(self.fields, row, strict=True)
            ],
        )


def _variable_limit(connection) -> int:
    """How many parameters one statement of ``connection`` may take: SQLite's own limit
    where the driver tells it, else Django's figure for the database."""
    raw = getattr(connection.connection, "getlimit", None)
    if raw is not None and connection.vendor == "sqlite":
        return raw(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    return connection.features.max_query_params or 65535


def update(model: type[Model], *, org_id: Any, pk: Any, **values: Any) -> int:
    """``UPDATE`` of one row, by its organization and primary key, setting ``values`` (by
    field name). The number of rows changed (0 or 1)."""
    connection, _, _ = _target(model)
    return _run(connection, *_update_of(connection, model, org_id, pk, values))


def _update_of(connection, model: type[Model], org_id: Any, pk: Any, values: Mapping) -> tuple:
    """``update``'s statement and its parameters."""
    meta, quote = model._meta, connection.ops.quote_name
    fields = [meta.get_field(name) for name in values]
    return (
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


def shift_down(
    model: type[Model],
    *,
    org_id: Any,
    within: Mapping[str, Any],
    position: str,
    first: int,
    top: int,
    **values: Any,
) -> int:
    """Moves the rows of one ordered group down one position: the rows of ``org_id`` and
    ``within`` (field name -> value: the group, such as a download's links) whose
    ``position`` is ``first`` or more, setting ``values`` (by field name, such as the time
    they change) on them. ``top`` is at least every position of the group in use. The number
    of rows moved.

    Two relative UPDATEs whatever the number of rows. A non-deferrable unique constraint on
    the positions is checked row by row inside one UPDATE (PostgreSQL and SQLite alike) and
    a check that positions are positive rules out passing through negative ones, so a
    single ``position = position - 1`` could collide mid-statement. The rows first jump
    above every position in use (``+ top``: all distinct, none taken), then land one below
    where they were, on positions only they claim.
    """
    connection, meta, quote = _target(model)
    table, seq = quote(meta.db_table), meta.get_field(position)
    column = quote(seq.column)
    group = [meta.get_field("org"), *(meta.get_field(name) for name in within)]
    where = " AND ".join(f"{quote(field.column)} = %s" for field in group)
    scope = [
        field.get_db_prep_value(value, connection)
        for field, value in zip(group, [org_id, *within.values()], strict=True)
    ]
    fields = [meta.get_field(name) for name in values]
    _run(
        connection,
        f"UPDATE {table} SET {column} = {column} + %s WHERE {where} AND {column} >= %s",
        [top, *scope, seq.get_db_prep_value(first, connection)],
    )
    return _run(
        connection,
        f"UPDATE {table} SET {column} = {column} - %s"
        f"{''.join(f', {quote(field.column)} = %s' for field in fields)}"
        f" WHERE {where} AND {column} > %s",
        [
            top + 1,
            *(
                field.get_db_prep_save(value, connection)
                for field, value in zip(fields, values.values(), strict=True)
            ),
            *scope,
            seq.get_db_prep_value(top, connection),
        ],
    )


def next_number(model: type[Model], *, org_id: Any, counter: str) -> int:
    """The organization's next number of ``model``'s ``counter`` (1 for the first), counted
    in its one row per organization (a unique constraint on ``org`` alone): one ``INSERT ...
    ON CONFLICT (org) DO UPDATE SET counter = counter + 1 RETURNING counter``, on PostgreSQL
    and SQLite alike. The row stays locked until the caller's transaction ends, so the
    numbers of concurrent transactions are given, and committed, one after the other.
    Every other column of a new row is filled as the model would (``fillers``)."""
    connection, meta, quote = _target(model)
    org, value = meta.get_field("org"), meta.get_field(counter)
    filled = fillers(model, [org, value], by=f"statements.next_number({meta.label}, ...)")
    table, column = quote(meta.db_table), quote(value.column)
    columns = [quote(org.column), column, *(quote(field.column) for field, _ in filled)]
    with preparing_cursor(connection) as cursor:
        cursor.execute(
            f"INSERT INTO {table} AS c ({', '.join(columns)})"
            f" VALUES ({', '.join(['%s'] * len(columns))})"
            f" ON CONFLICT ({quote(org.column)}) DO UPDATE SET {column} = c.{column} + 1"
            f" RETURNING {column}",
            [
                org.get_db_prep_value(org_id, connection),
                1,
                *(field.get_db_prep_save(make(), connection) for field, make in filled),
            ],
        )
        return cursor.fetchone()[0]


class Adjust:
    """``UPDATE`` of the rows of ``model`` that ``keys`` (field names) pick within an
    organization, each call setting ``assign`` (field names) to given values, adding given
    amounts to ``add`` and raising ``at_least`` to a given floor (``CASE WHEN c < %s``: the
    same on every database), each given as a sequence in the order of the fields. The number
    of rows changed. A statement of one shape, prepared on PostgreSQL, for a hot write of
    counters (a progress report's enrolment standing)."""

    def __init__(
        self,
        model: type[Model],
        *,
        keys: Sequence[str],
        assign: Sequence[str] = (),
        add: Sequence[str] = (),
        at_least: Sequence[str] = (),
    ):
        meta = model._meta
        self.model = model
        self.keys = [meta.get_field("org"), *(meta.get_field(name) for name in keys)]
        self.assign = [meta.get_field(name) for name in assign]
        self.add = [meta.get_field(name) for name in add]
        self.at_least = [meta.get_field(name) for name in at_least]
        self._written: dict[str, str] = {}  # the statement, by database alias

    def _sql(self, meta, quote) -> str:
        column = {field: quote(field.column) for field in [*self.assign, *self.add, *self.at_least]}
        sets = [
            *(f"{column[field]} = %s" for field in self.assign),
            *(f"{column[field]} = {column[field]} + %s" for field in self.add),
            *(
                f"{column[field]} = CASE WHEN {column[field]} < %s THEN %s ELSE {column[field]} END"
                for field in self.at_least
            ),
        ]
        where = " AND ".join(f"{quote(field.column)} = %s" for field in self.keys)
        return f"UPDATE {quote(meta.db_table)} SET {', '.join(sets)} WHERE {where}"

    def __call__(
        self,
        org_id: Any,
        keys: Sequence[Any],
        *,
        assign: Sequence[Any] = (),
        add: Sequence[Any] = (),
        at_least: Sequence[Any] = (),
        along: tuple[type[Model], Any, Mapping[str, Any]] | None = None,
    ) -> int:
        """The number of rows of ``model`` changed. ``along``: ``(model, pk, values)``, an
        ``update`` of another row of the organization made with it: on PostgreSQL in the
        same statement (a data-modifying ``WITH``), which spares a hot write a round trip;
        elsewhere just before it."""
        connection, meta, quote = _target(self.model)
        sql = self._written.get(connection.alias)
        if sql is None:
            sql = self._written[connection.alias] = self._sql(meta, quote)
        params = [
            *(
                field.get_db_prep_save(value, connection)
                for field, value in zip(self.assign, assign, strict=True)
            ),
            *(
                field.get_db_prep_save(value, connection)
                for field, value in zip(self.add, add, strict=True)
            ),
        ]
        for floor in at_least:
            params += [floor, floor]
        params += [
            field.get_db_prep_value(value, connection)
            for field, value in zip(self.keys, [org_id, *keys], strict=True)
        ]
        if along is not None:
            other, pk, values = along
            other_sql, other_params = _update_of(connection, other, org_id, pk, values)
            if connection.vendor == "postgresql":
                return _run(connection, f"WITH along AS ({other_sql}) {sql}", other_params + params)
            _run(connection, other_sql, other_params)
        return _run(connection, sql, params)


class Tally:
    """Adds to counters of ``model`` kept one row per ``keys`` (field names, after the
    organization, which a unique constraint covers): ``INSERT ... ON CONFLICT (org, keys)
    DO UPDATE SET c = c + EXCLUDED.c`` of rows ``(org_id, keys..., amounts...)``, in one
    statement whatever their number (PostgreSQL and SQLite alike). A row not there yet is
    made with the amounts, its other columns filled as the model would (``fillers``). Rows
    are written in the order of their keys, so that two statements adding to the same rows
    lock them in the same order."""

    def __init__(self, model: type[Model], *, keys: Sequence[str], counters: Sequence[str]):
        meta = model._meta
        self.model = model
        self.keys = [meta.get_field("org"), *(meta.get_field(name) for name in keys)]
        self.counters = [meta.get_field(name) for name in counters]
        self.filled = fillers(
            model, [*self.keys, *self.counters], by=f"statements.Tally({meta.label}, ...)"
        )
        self.fields = [*self.keys, *self.counters, *(field for field, _ in self.filled)]

    def __call__(self, rows: Iterable[Sequence[Any]]) -> None:
        rows = sorted((tuple(row) for row in rows), key=lambda row: [str(v) for v in row])
        if not rows:
            return
        connection, meta, quote = _target(self.model)
        table = quote(meta.db_table)
        row_sql = f"({', '.join(['%s'] * len(self.fields))})"
        added = ", ".join(
            f"{quote(field.column)} = {table}.{quote(field.column)}"
            f" + EXCLUDED.{quote(field.column)}"
            for field in self.counters
        )
        _run(
            connection,
            f"INSERT INTO {table} ({', '.join(quote(field.column) for field in self.fields)})"
            f" VALUES {', '.join([row_sql] * len(rows))}"
            f" ON CONFLICT ({', '.join(quote(field.column) for field in self.keys)})"
            f" DO UPDATE SET {added}",
            [
                field.get_db_prep_save(value, connection)
                for row in rows
                for field, value in zip(
                    self.fields, (*row, *(make() for _, make in self.filled)), strict=True
                )
            ],
        )
