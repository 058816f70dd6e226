"""A sliding window's count, one row per key, counted and refused in one statement.

A ``SlidingWindow`` is given a model with a unique key, a JSON list of the times of the
hits let through (Unix seconds) and a float column of when the row may be purged. ``hit``
is one ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING``: the conflict locks the key's row
(on PostgreSQL concurrent hits on one key queue there, as behind ``FOR UPDATE``; SQLite
runs one writer at a time), the update keeps the hits still in the window and adds this
one, and its ``WHERE`` refuses the hit when the window is full, so that nothing is written
and nothing returned. No transaction of its own; a row deleted meanwhile (a purge) is
inserted again by the database itself. The statement is prepared on PostgreSQL
(``lms.db.compiled.preparing_cursor``): it runs on every hit and plans the same whatever
the values.

PostgreSQL and SQLite (3.35 and later, for ``RETURNING``) each have their statement, built
from the model's ``_meta`` and quoted by the connection the first time the database is
used. The stored hits are in the order they were written, not sorted: only their count and
the oldest in the window matter. Every other column of the model is filled on insert as the
model would (``lms.db.statements.fillers``): a field added with a default needs no change
here; one without fails when the ``SlidingWindow`` is made.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import connections, router
from django.db.models import Model
from django.db.utils import NotSupportedError

from lms.db.compiled import preparing_cursor
from lms.db.statements import fillers

# The hits still in the window, as a JSON array: a JSON path filter, run in C over the stored
# array (casting each element to float8 in SQL and aggregating them again cost more for
# every hit kept).
_PG_KEPT = (
    "jsonb_path_query_array(w.{hits}, '$[*] ? (@ > $since)',"
    " jsonb_build_object('since', %(since)s::float8))"
)
# ``expires`` (indexed, for the purge) moves two windows ahead, and only once it is less than
# a window away: it stays past the last hit's window, and most hits leave it as it was, so
# on PostgreSQL their update is a HOT one (no index entry; the page is pruned without a
# vacuum). A hit that moved it on every request wrote three index entries and left a dead
# row version each time.
_EXPIRES = (
    "{expires} = CASE WHEN w.{expires} < %(renew_before)s THEN %(expires)s ELSE w.{expires} END"
)
_POSTGRESQL = f"""
INSERT INTO {{table}} AS w ({{key}}, {{hits}}, {{expires}}{{filled_columns}})
VALUES (%(key)s, jsonb_build_array(%(now)s::float8), %(expires)s{{filled_values}})
ON CONFLICT ({{key}}) DO UPDATE SET
  {{hits}} = {_PG_KEPT} || to_jsonb(%(now)s::float8),
  {_EXPIRES}
WHERE jsonb_array_length({_PG_KEPT}) < %(limit)s
RETURNING jsonb_array_length({{hits}})
"""
# SQLite writes a real into JSON with 15 significant digits (10 microseconds of a Unix time);
# each time is written with 17, which read back as the same float.
_SQLITE_EXACT = "json(printf('%%!.17g', {}))"
_SQLITE = f"""
INSERT INTO {{table}} AS w ({{key}}, {{hits}}, {{expires}}{{filled_columns}})
VALUES (%(key)s, json_array({_SQLITE_EXACT.format("%(now)s")}), %(expires)s{{filled_values}})
ON CONFLICT ({{key}}) DO UPDATE SET
  {{hits}} = (
    SELECT json_group_array({_SQLITE_EXACT.format("t")}) FROM (
      SELECT value AS t FROM json_each(w.{{hits}}) WHERE value > %(since)s
      UNION ALL SELECT %(now)s
    )
  ),
  {_EXPIRES}
WHERE (SELECT count(*) FROM json_each(w.{{hits}}) WHERE value > %(since)s) < %(limit)s
RETURNING json_array_length({{hits}})
"""
_UPSERTS = {"postgresql": _POSTGRESQL, "sqlite": _SQLITE}


class SlidingWindow:
    """The hits of ``model``'s rows: ``key``, ``hits`` and ``expires`` name its fields."""

    def __init__(
        self, model: type[Model], *, key: str = "key", hits: str = "hits", expires: str = "expires"
    ):
        meta = model._meta
        self.model = model
        self.fields = [meta.get_field(name) for name in (key, hits, expires)]
        self.filled = fillers(model, self.fields, by=f"The sliding window of {meta.label}")  # type: ignore[arg-type]
        self._sql: dict[str, tuple[str, str]] = {}

    def _statements(self, connection) -> tuple[str, str]:
        """(the upsert, the read of one key's hits) on ``connection``'s database."""
        found = self._sql.get(connection.vendor)
        if found is None:
            if connection.vendor not in _UPSERTS:
                raise NotSupportedError(
                    f"The sliding window of {self.model._meta.label} counts on PostgreSQL"
                    f" or SQLite, not on {connection.display_name}."
                )
            quote = connection.ops.quote_name
            table = quote(self.model._meta.db_table)
            key, hits, expires = (quote(field.column) for field in self.fields)  # type: ignore[union-attr]
            upsert = _UPSERTS[connection.vendor].format(
                table=table,
                key=key,
                hits=hits,
                expires=expires,
                filled_columns="".join(f", {quote(field.column)}" for field, _ in self.filled),
                filled_values="".join(f", %(fill_{n})s" for n in range(len(self.filled))),
            )
            found = self._sql[connection.vendor] = (
                upsert,
                f"SELECT {hits} FROM {table} WHERE {key} = %s",
            )
        return found

    def hit(self, key: str, *, now: float, window: float, limit: int) -> int | None:
        """Count a hit of ``key`` at ``now``: the number of hits the window of ``window``
        seconds up to ``now`` holds with it (1: it starts the window), or None when it
        already held ``limit``, and then the hit is not counted. The row's ``expires`` is
        at least a window past ``now`` afterwards."""
        connection = connections[router.db_for_write(self.model)]
        upsert, _ = self._statements(connection)
        params: dict[str, Any] = {
            "key": key,
            "now": now,
            "since": now - window,
            "limit": limit,
            "renew_before": now + window,
            "expires": now + 2 * window,
        }
        for n, (field, make) in enumerate(self.filled):
            params[f"fill_{n}"] = field.get_db_prep_save(make(), connection)
        with preparing_cursor(connection) as cursor:
            cursor.execute(upsert, params)
            row = cursor.fetchone()
        return None if row is None else row[0]

    def hits(self, key: str) -> list[float]:
        """The times stored for ``key``, in the order they were written, those that have
        left the window included (until its next counted hit drops them); [] for no row.
        Read from the database the hits are written to."""
        connection = connections[router.db_for_write(self.model)]
        _, read = self._statements(connection)
        with preparing_cursor(connection) as cursor:
            cursor.execute(read, [key])
            row = cursor.fetchone()
        if row is None:
            return []
        # psycopg decodes jsonb itself; SQLite hands over the text.
        return json.loads(row[0]) if isinstance(row[0], str | bytes) else row[0]
