"""Text compared in Unicode code-point order on every database."""

from __future__ import annotations

from django.db.models import Func


class CodePointOrder(Func):
    """An expression compared in Unicode code-point order on every database.

    PostgreSQL compares text by the database's collation, so the key is pinned to
    ``COLLATE "C"`` (byte order, which for UTF-8 is code-point order). SQLite's default
    ``BINARY`` collation already is code-point order. The index and the ``ORDER BY`` render
    the same SQL, which is what lets the planner read the order from the index.
    """

    template = "%(expressions)s"
    arity = 1

    def as_postgresql(self, compiler, connection, **extra_context):
        extra_context["template"] = '%(expressions)s COLLATE "C"'
        return self.as_sql(compiler, connection, **extra_context)
