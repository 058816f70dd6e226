"""``Idempotency-Key`` for any write, at the view: the first answer to a caller's key is
stored in the write's own transaction and replayed, storing nothing again, for 24 hours.

The store is a tenant-owned model with ``membership``, ``key``, ``response_status`` and
``response_body`` fields and a unique constraint on (org, membership, key); the view that
offers idempotency names it. When two requests race on one key, the constraint refuses the
second's record, which rolls its write back, and the second answers the first's answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

TTL = timedelta(hours=24)


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    replayed: bool = False


def idempotent(
    *, store, org, membership, key: str | None, write: Callable[[], tuple[int, Any]]
) -> Answer:
    """``write()`` (status, body) once per (membership, key) within ``TTL``."""
    if key is None:
        return Answer(*write())
    replay = _replay(store, org, membership, key)
    if replay is not None:
        return replay
    try:
        with transaction.atomic():
            status, body = write()
            rows = store.objects.for_org(org).filter(membership=membership)
            rows.filter(created_at__lt=timezone.now() - TTL).delete()
            store.objects.create(
                org=org,
                membership=membership,
                key=key,
                response_status=status,
                response_body=body,
            )
        return Answer(status, body)
    except IntegrityError:
        replay = _replay(store, org, membership, key)
        if replay is None:
            raise
        return replay


def _replay(store, org, membership, key: str) -> Answer | None:
    record = (
        store.objects.for_org(org)
        .filter(membership=membership, key=key, created_at__gte=timezone.now() - TTL)
        .only("response_status", "response_body")
        .first()
    )
    if record is None:
        return None
    return Answer(record.response_status, record.response_body, replayed=True)
