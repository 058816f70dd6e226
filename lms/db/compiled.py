"""Reads whose SQL the ORM writes once per process, not once per request.

Building a queryset and compiling it to SQL costs more than the database spends answering
the small reads of the API (figures: docs/performance.md). A ``Compiled`` read is
a function from parameters to a queryset; the ORM compiles it the first time a *shape* is
used, and every later call only binds the new values into the SQL it kept, on the database
the router chooses for that call (a read replica's, ``lms.db.replica``)::

    AUTOMATION = Compiled(
        lambda org_id, id: Automation.objects.filter(org_id=org_id, id=id).values_list(...)
    )
    rows = AUTOMATION.rows(org_id=org.id, id=automation_id)

- **Values** (ids, search terms, numbers) are bound as parameters. The positions of each
  value in the compiled parameters are learned by compiling the function twice with
  different stand-ins of the same types, then checked by compiling it a third time with
  stand-ins chosen to break a wrong guess (a string with ``%``, ``_`` and ``\\``); the
  read refuses to be kept otherwise (``NotCompilable``). A value of a type not listed in
  ``_STAND_INS`` is refused too.
- **Shape** (what changes the SQL text itself: a sort, a page size, whether there is a
  search) is passed as ``shape=`` and handed to the function as is; each shape is compiled
  once. A function must not inline a value into the SQL: the two compilations would differ
  and the read is refused.
- Rows come back as ``values_list`` gives them, with the ORM's converters applied, so on
  SQLite a UUID or a timestamp reads back as on PostgreSQL.
- Tenancy still fails closed: a function whose queryset names no organization raises
  ``UnscopedQuery`` when it is compiled, as evaluating it would.
- ``prepare=True`` also spares PostgreSQL its planning: the statement is sent with its
  parameters bound on the server and prepared on each connection the first time, and after
  five executions PostgreSQL keeps a generic plan when it costs no more than the custom
  ones (``plan_cache_mode``). Planning was most of a small read's database time (figures:
  docs/performance.md). Only for reads whose plan does not depend on the values, lookups
  by id: a generic plan cannot know how selective a search term is. A read whose generic
  plan stays cheap only while the rows it reads are few (a list of an organization) passes
  a policy instead, asked on every call with the call's values: ``PrepareWhenSmall``
  prepares it for an organization last told to be small (the bundle list,
  ``bundles.wire_reads``) and leaves any other planned for its own values. The SQL is the
  same either way, only the cursor differs: one ``Compiled`` keeps the read once, and
  PostgreSQL keeps the prepared plan on each connection. Off where the connection has
  prepared statements off (``LMS_DB_PREPARE=false``, for a pooler in transaction mode) and
  on SQLite.

It is for reads on the hot paths; anything else reads through the ORM as usual.
"""

from __future__ import annotations

import datetime
import secrets
import uuid
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connections, router
from django.db.models import Model, QuerySet

try:  # the PostgreSQL backend's cursor that binds parameters on the server (psycopg 3)
    from django.db.backends.postgresql.base import ServerBindingCursor
except (ImportError, ImproperlyConfigured):  # pragma: no cover - no psycopg 3: nothing prepared
    ServerBindingCursor = None  # type: ignore[assignment,misc]

from lms.bounded import BoundedCache
from lms.tenancy import ids_or_404, not_found

# Compiled shapes kept per read; beyond it the oldest half is dropped.
MAX_SHAPES = 256


class NotCompilable(RuntimeError):
    """The function's SQL cannot be reused with other values."""


def _text(tricky: bool) -> str:
    core = secrets.token_hex(8)
    return f"%{core}_\\'x" if tricky else core


_STAND_INS: dict[type, Callable[[bool], Any]] = {
    uuid.UUID: lambda tricky: uuid.uuid4(),
    str: _text,
    int: lambda tricky: 1_000_003 + secrets.randbelow(1 << 40),
    datetime.datetime: lambda tricky: datetime.datetime(
        2001, 2, 3, 4, 5, 6, secrets.randbelow(999_999) + 1, tzinfo=datetime.UTC
    ),
}


def _stand_ins(values: dict[str, Any], tricky: bool = False) -> dict[str, Any]:
    stand_ins = {}
    for name, value in values.items():
        make = _STAND_INS.get(type(value))
        if make is None:
            raise NotCompilable(f"A value of type {type(value).__name__} ({name}) cannot be bound.")
        stand_ins[name] = make(tricky)
    return stand_ins


# How one compiled parameter is made from the call's values.
Binder = Callable[[dict[str, Any], Any], Any]
M = TypeVar("M", bound=Model)


def _binder(position_a: Any, position_b: Any, a: dict, b: dict) -> Binder:
    """Learns what makes parameter ``position_a`` (``position_b`` with the other stand-ins)."""
    if position_a == position_b and not any(position_a == value for value in a.values()):
        return lambda values, ops: position_a  # a constant of the query
    for name in a:
        if position_a == a[name] and position_b == b[name]:
            return lambda values, ops, name=name: values[name]  # type: ignore[misc]
        hexes = (a[name].hex, b[name].hex) if isinstance(a[name], uuid.UUID) else None
        if (position_a, position_b) == hexes:  # a UUID where the database has no UUID type
            return lambda values, ops, name=name: values[name].hex  # type: ignore[misc]
        if (
            isinstance(a[name], str)
            and isinstance(position_a, str)
            and isinstance(position_b, str)
            and position_a.count(a[name]) == 1
        ):
            prefix, suffix = position_a.split(a[name])
            if position_b == f"{prefix}{b[name]}{suffix}":  # a LIKE pattern
                return lambda values, ops, name=name: (  # type: ignore[misc]
                    f"{prefix}{ops.prep_for_like_query(values[name])}{suffix}"
                )
    raise NotCompilable(f"A parameter ({position_a!r}) is none of the values given.")


@dataclass(frozen=True)
class _Plan:
    alias: str
    names: tuple[str, ...]
    sql: str
    binders: tuple[Binder, ...]
    converters: tuple[tuple[int, tuple, Any], ...]
    # The model routed on, and whether ``alias`` is fixed (``using``, ``select_for_update``:
    # the database written to) or asked of the router on every call (a read: see ``_alias``).
    model: type[Model] | None = None
    fixed: bool = True
    # model -> (row positions of its fields, their names, annotations): ``records``'s.
    layouts: dict = field(default_factory=dict, compare=False)

    def params(self, values: dict[str, Any], ops) -> list:
        return [bind(values, ops) for bind in self.binders]


def _compile(queryset: QuerySet) -> tuple[str, tuple, Any]:
    check = getattr(queryset, "_check_scope", None)
    if check is not None:
        check()  # tenancy fails closed here as it would on evaluation
    compiler = queryset.query.get_compiler(using=queryset.db)
    sql, params = compiler.as_sql()
    return sql, tuple(params), compiler


def _alias(plan: _Plan) -> str:
    """The database a call of ``plan`` reads: where the ORM would send its queryset now. A
    read asks the router on every call, as evaluating the queryset would (with a read
    replica, ``lms.db.replica`` decides per request); the SQL is the same on either database
    (both PostgreSQL)."""
    return plan.alias if plan.fixed else router.db_for_read(plan.model)  # type: ignore[arg-type]


class PrepareWhenSmall:
    """``prepare=`` for a read prepared only for the values known to be small: a call is
    prepared when the size last told for its ``key`` value (``note``) is at most ``limit``.
    A value not told yet, or told larger, is planned for its own values; the caller tells
    each size it reads, so one that grew is prepared once more, and its read tells the new
    size. Sizes of at most ``remember`` values are kept (``lms.bounded``). One policy may
    serve several reads of the same values."""

    def __init__(self, *, key: str, limit: int, remember: int = 4096) -> None:
        self.key = key
        self.limit = limit
        self._sizes = BoundedCache(remember)

    def note(self, value: Hashable, size: int) -> None:
        """Remembers ``size`` as the size of ``value`` (of ``key``)."""
        if self._sizes.get(value) != size:  # most reads tell what is known: no lock taken
            self._sizes.set(value, size)

    def small(self, value: Hashable) -> bool:
        """Whether ``value`` was last told to be at most ``limit``."""
        size = self._sizes.get(value)
        return size is not None and size <= self.limit

    def prepares(self, values: dict[str, Any]) -> bool:
        """Whether a call with ``values`` is prepared."""
        return self.small(values[self.key])

    def clear(self) -> None:
        """Forgets every size."""
        self._sizes.clear()


class Compiled:
    """A read compiled once per shape and database (see the module's docstring).
    ``prepare``: True, False, or a policy (``PrepareWhenSmall``) asked on every call."""

    def __init__(
        self, build: Callable[..., QuerySet], *, prepare: bool | PrepareWhenSmall = False
    ) -> None:
        self.build = build
        self.prepare = prepare
        self._policy = None if isinstance(prepare, bool) else prepare
        if self._policy is not None and not callable(getattr(self._policy, "prepares", None)):
            raise TypeError("prepare= takes True, False or a policy with prepares(values).")
        self._plans = BoundedCache(MAX_SHAPES)

    def _queryset(self, shape: Hashable, values: dict[str, Any]) -> QuerySet:
        return self.build(**values) if shape is None else self.build(shape, **values)

    def _plan(self, shape: Hashable, values: dict[str, Any]) -> _Plan:
        plan = self._plans.get(shape)
        if plan is not None:
            return plan
        a, b = _stand_ins(values), _stand_ins(values)
        queryset = self._queryset(shape, a)
        alias = queryset.db
        sql_a, params_a, compiler = _compile(queryset)
        sql_b, params_b, _ = _compile(self._queryset(shape, b))
        if sql_a != sql_b or len(params_a) != len(params_b):
            raise NotCompilable("The SQL changes with the values: pass what changes it as shape.")
        ops = connections[alias].ops
        binders = tuple(_binder(pa, pb, a, b) for pa, pb in zip(params_a, params_b, strict=True))
        names = tuple(getattr(queryset.query, "selected", None) or ())
        fixed = queryset._for_write or queryset._db is not None  # type: ignore[attr-defined]  # private: docs/architecture.md "Upgrading Django"
        plan = _Plan(
            alias, names, sql_a, binders, self._converters(compiler), queryset.model, fixed
        )
        tricky = _stand_ins(values, tricky=True)
        expected = _compile(self._queryset(shape, tricky))
        if (plan.sql, tuple(plan.params(tricky, ops))) != expected[:2]:
            raise NotCompilable("Rebinding values does not give the ORM's own SQL.")
        self._plans.set(shape, plan)
        return plan

    @staticmethod
    def _converters(compiler) -> tuple[tuple[int, tuple, Any], ...]:
        fields = [selected[0] for selected in compiler.select[: compiler.col_count]]
        return tuple(
            (index, tuple(functions), expression)
            for index, (functions, expression) in compiler.get_converters(fields).items()
        )

    def rows(self, shape: Hashable = None, **values: Any) -> list[tuple]:
        """The rows the function's queryset (a ``values_list``) answers for ``values``."""
        plan = self._plan(shape, values)
        return self._rows(plan, values, _alias(plan))

    def records(self, model: type[M], shape: Hashable = None, **values: Any) -> list[M]:
        """The rows as ``model`` instances, as the ORM builds them (``from_db``): the
        ``values_list`` names the model's fields by attribute name (others are deferred);
        any other name it lists (an annotation) is set as an attribute."""
        plan = self._plan(shape, values)
        layout = plan.layouts.get(model)
        if layout is None:  # where each of the model's fields is in a row: once per plan
            concrete = [each.attname for each in model._meta.concrete_fields]
            fields = [plan.names.index(name) for name in concrete if name in plan.names]
            extra = [(index, name) for index, name in enumerate(plan.names) if name not in concrete]
            layout = plan.layouts[model] = (fields, [plan.names[i] for i in fields], extra)
        fields, field_names, extra = layout
        records = []
        alias = _alias(plan)
        for row in self._rows(plan, values, alias):
            record = model.from_db(alias, field_names, [row[index] for index in fields])
            for index, name in extra:
                setattr(record, name, row[index])
            records.append(record)
        return records

    def _rows(self, plan: _Plan, values: dict[str, Any], alias: str) -> list[tuple]:
        connection = connections[alias]
        prepare = self.prepare if self._policy is None else self._policy.prepares(values)
        kept = kept_cursor(connection) if prepare else None
        if kept is not None:
            kept.execute(plan.sql, plan.params(values, connection.ops))
            rows = kept.fetchall()
        else:
            with preparing_cursor(connection) if prepare else connection.cursor() as cursor:
                cursor.execute(plan.sql, plan.params(values, connection.ops))
                rows = cursor.fetchall()
        if not plan.converters:
            return [tuple(row) for row in rows]
        converted = []
        for row in rows:
            row = list(row)
            for index, functions, expression in plan.converters:
                value = row[index]
                for convert in functions:
                    value = convert(value, expression, connection)
                row[index] = value
            converted.append(tuple(row))
        return converted

    def first(self, shape: Hashable = None, **values: Any) -> tuple | None:
        """The first row, or None."""
        rows = self.rows(shape, **values)
        return rows[0] if rows else None

    def one_or_404(self, model: type[Model], shape: Hashable = None, **values: Any) -> tuple:
        """The first row, its ids parsed first as ``get_or_404`` parses them: a malformed id
        or no row is ``model``'s NotFound."""
        row = self.first(shape, **ids_or_404(model, values))
        if row is None:
            raise not_found(model)
        return row

    def record_or_404(self, model: type[M], shape: Hashable = None, **values: Any) -> M:
        """``one_or_404``'s row as a ``model`` instance (see ``records``)."""
        found = self.records(model, shape, **ids_or_404(model, values))
        if not found:
            raise not_found(model)
        return found[0]


if ServerBindingCursor is not None:

    class _PreparingCursor(ServerBindingCursor):
        """Binds on the server and prepares every statement it executes."""

        shown_by = None  # the connection's operations, where the connection logs its queries

        def execute(self, query, params=None, *, prepare=None, binary=None):
            result = super().execute(query, params, prepare=True, binary=binary)
            if self.shown_by is not None:
                # Django logs the cursor's last query; psycopg keeps none for a prepared
                # statement, so it is shown as the client-bound statement would be.
                shown = self.shown_by.compose_sql(query, params)
                self._query = SimpleNamespace(query=shown.encode())
            return result


def preparing_cursor(connection):
    """A cursor of ``connection`` (Django's wrapper: errors translated, queries counted and
    logged as any cursor's) that prepares its statements; ``connection.cursor()`` where
    nothing is prepared: another database, or a connection with prepared statements off.
    For a statement of our own SQL on a hot path (``%s`` or ``%(name)s`` parameters, one
    statement), whose plan does not depend on its values."""
    if connection.vendor != "postgresql" or ServerBindingCursor is None:
        return connection.cursor()
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    if connection.connection.prepare_threshold is None:
        return connection.cursor()
    connection.validate_thread_sharing()
    with connection.wrap_database_errors:
        cursor = _PreparingCursor(connection.connection)
    if connection.queries_logged:
        cursor.shown_by = connection.ops
        return connection.make_debug_cursor(cursor)
    return connection.make_cursor(cursor)


def kept_cursor(connection):
    """The preparing cursor (``preparing_cursor``'s, wrapped by Django as any cursor) that
    ``connection``'s current database connection keeps for the compiled reads, made at its
    first read and used by every later one; None where it is not used: with
    ``settings.LMS_DB_KEEP_CURSOR`` off, where nothing is prepared, and where the
    connection logs its queries (a test's capture, ``DEBUG``), which gets a new cursor
    per read as before.

    A read executes and fetches every row at once, so no two reads share the cursor's
    result; the cursor keeps the last read's rows until the next read. Creating, wrapping
    and closing a cursor per read was a noticeable share of a compiled read's own
    instructions (docs/performance.md). A new database connection (after a close, an
    error, ``CONN_MAX_AGE``) gets a cursor of its own."""
    if (
        not settings.LMS_DB_KEEP_CURSOR
        or connection.vendor != "postgresql"
        or ServerBindingCursor is None
        or connection.queries_logged
    ):
        return None
    connection.close_if_health_check_failed()
    raw = connection.connection
    kept = getattr(connection, _KEPT, None)
    if kept is not None and kept[0] is raw and not raw.closed and raw.prepare_threshold is not None:
        connection.validate_thread_sharing()
        return kept[1]
    cursor = preparing_cursor(connection)
    if not isinstance(cursor.cursor, _PreparingCursor):  # prepared statements are off
        cursor.close()
        return None
    setattr(connection, _KEPT, (connection.connection, cursor))
    return cursor


# The attribute of Django's connection object holding (database connection, kept cursor).
_KEPT = "_lms_kept_cursor"
