"""Filters on a JSON object column that PostgreSQL and SQLite both answer in SQL.

Django's ``contains`` lookup on a JSON field is PostgreSQL's alone; ``ListAllows`` says the
one thing the apps need of a JSON list inside an object, on either database, in one
expression that a ``filter()`` takes as it is, whatever the values: true where the object
has no ``key`` (nothing is limited), or where its ``key`` is a list holding ``value`` (a
string). PostgreSQL answers it with ``?`` and JSON containment (``@>``), SQLite with
``json_type`` and ``json_each``.
"""

from __future__ import annotations

from django.db import NotSupportedError
from django.db.models import BooleanField, F, Func, Value


class ListAllows(Func):
    output_field = BooleanField()

    def __init__(self, column: str, key: str, value: str) -> None:
        super().__init__(F(column), Value(key), Value(value))

    def as_sql(self, compiler, connection, **extra):
        raise NotSupportedError("ListAllows is written for PostgreSQL and SQLite.")

    def _parts(self, compiler):
        column, key, value = self.source_expressions
        column_sql, column_params = compiler.compile(column)
        return column_sql, list(column_params), key.value, value.value

    def as_postgresql(self, compiler, connection, **extra):
        column, params, key, value = self._parts(compiler)
        sql = f"(NOT ({column} ? %s) OR ({column} -> %s) @> jsonb_build_array(%s::text))"
        return sql, [*params, key, *params, key, value]

    def as_sqlite(self, compiler, connection, **extra):
        column, params, key, value = self._parts(compiler)
        path = '$."' + key.replace('"', "") + '"'
        sql = (
            f"(json_type({column}, %s) IS NULL OR EXISTS "
            f"(SELECT 1 FROM json_each({column}, %s) WHERE json_each.value = %s))"
        )
        return sql, [*params, path, *params, path, value]
