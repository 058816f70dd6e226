"""Bundles for tests, with the timestamps a test needs (the model would stamp "now")."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from bundles.models import Bundle
from bundles.services import NewBundle, insert_bundles

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def add_bundles(
    org,
    names: Sequence[str],
    *,
    created: Sequence[datetime] | None = None,
    updated: Sequence[datetime] | None = None,
) -> list[Bundle]:
    """Bundles named ``names`` in ``org``, by default created a minute apart from T0 and
    never updated, in the order given."""
    created = created or [T0 + timedelta(minutes=i) for i in range(len(names))]
    updated = updated or created
    return insert_bundles(
        org=org,
        bundles=[
            NewBundle(name=name, created_at=c, updated_at=u)
            for name, c, u in zip(names, created, updated, strict=True)
        ],
    )
