"""Every write of bundles."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from itertools import islice

from django.db import transaction
from django.utils import timezone

from bundles import catalogue
from bundles.models import Bundle
from organizations.api import Organization


@dataclass(frozen=True)
class NewBundle:
    name: str
    created_at: datetime
    updated_at: datetime
    description: str = ""


@transaction.atomic
def insert_bundles(*, org: Organization, bundles: Iterable[NewBundle]) -> list[Bundle]:
    """Inserts the bundles into ``org`` in as few statements as the database allows, keeping
    their timestamps, and returns them. For bulk loads: names are not validated beyond the
    column's length."""
    rows = [
        Bundle(
            org=org,
            name=new.name,
            description=new.description,
            created_at=new.created_at,
            updated_at=new.updated_at,
        )
        for new in bundles
    ]
    for row in rows:
        row.keep_timestamps = True  # type: ignore[attr-defined]  # see lms.models.StampField
    return Bundle.objects.bulk_create(rows)


def generate_bundles(
    *,
    org: Organization,
    count: int,
    batch_size: int = 5000,
    seed: int | None = None,
    now: datetime | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Adds ``count`` bundles with realistic names (``catalogue.names``) to ``org``, created
    over the five years before ``now`` and in creation order. Each batch is its own
    transaction, so an interrupted run keeps the batches it finished. ``on_batch`` gets the
    running number of rows inserted after each batch. The same ``seed`` gives the same
    names and times whatever the batch size. Returns ``count``."""
    rng = random.Random(seed)
    start, end = catalogue.default_span(now or timezone.now())
    names = catalogue.names(random.Random(rng.random()))
    stamps = catalogue.timestamps(random.Random(rng.random()), count, start, end)
    done = 0
    while done < count:
        size = min(batch_size, count - done)
        batch = [
            NewBundle(name=name, created_at=created, updated_at=updated)
            for name, (created, updated) in zip(
                islice(names, size), islice(stamps, size), strict=True
            )
        ]
        done += len(insert_bundles(org=org, bundles=batch))
        if on_batch is not None:
            on_batch(done)
    return done
