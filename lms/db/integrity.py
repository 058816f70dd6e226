"""Which unique constraint a refused write broke, read from the database's own error.

A service that expects a concurrent writer to break one of its model's unique constraints
(a race it retries, a name another request took) must tell that refusal from any other
(a NOT NULL column left out, a foreign key, a check), which is a fault to surface as a
500. PostgreSQL names the constraint an error breaks (psycopg's ``diag``); SQLite names its
columns (``UNIQUE constraint failed: table.a, table.b``). ``UniqueRefusal`` reads both,
its names and columns taken from the model's ``UniqueConstraint``s.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import IntegrityError
from django.db.models import Model, UniqueConstraint

_SQLITE_UNIQUE = "UNIQUE constraint failed: "


class UniqueRefusal:
    """Whether an ``IntegrityError`` is one of ``model``'s unique constraints refusing a
    row: all of them, or those named in ``names``."""

    def __init__(self, model: type[Model], names: Iterable[str] | None = None) -> None:
        wanted = None if names is None else set(names)
        constraints = [
            constraint
            for constraint in model._meta.constraints
            if isinstance(constraint, UniqueConstraint)
            and (wanted is None or constraint.name in wanted)
        ]
        if wanted is not None and {c.name for c in constraints} != wanted:
            raise ValueError(f"{model._meta.label} has no unique constraint of each of {wanted}.")
        self.names = frozenset(constraint.name for constraint in constraints)
        self.columns = frozenset(
            frozenset(model._meta.get_field(name).column for name in constraint.fields)  # type: ignore[union-attr]
            for constraint in constraints
        )

    def __call__(self, error: IntegrityError) -> bool:
        diag = getattr(error.__cause__, "diag", None)
        if diag is not None:
            return diag.constraint_name in self.names
        message = str(error)
        if not message.startswith(_SQLITE_UNIQUE):
            return False
        named = message.removeprefix(_SQLITE_UNIQUE).split(",")
        return frozenset(column.strip().rpartition(".")[2] for column in named) in self.columns
