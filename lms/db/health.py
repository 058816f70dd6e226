"""Whether the database answers, for the readiness probe (``lms.views.readyz``)."""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, connections


def ping(alias: str = DEFAULT_DB_ALIAS) -> None:
    """One ``SELECT 1`` on the database ``alias``; raises whatever reaching it raised."""
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT 1")
