"""``Idempotency-Key`` for any write, at the view: the first answer to a caller's key is
stored in the write's own transaction and replayed, storing nothing again, for a while (24
hours for 4.3's progress reports; 10 minutes for 7.3's invite accepts).

The store is a model with ``key``, ``response_status``, ``response_body`` and ``created_at``
fields, and a unique constraint that a second record of one answer breaks (identity's
``IdempotencyRecord``); the view that offers idempotency names it: ``idempotent`` for a
caller's write, ``remembered`` where the records are found otherwise (an invite accept's, by
the invite's token, under the membership the accept made). When two requests race on one
key, the constraint (or, for a write that locks its record, the error the second write
meets) refuses the second, which rolls its write back, and the second answers the first's
answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

TTL = timedelta(hours=24)
MAX_KEY_LENGTH = 255
HEADER = "Idempotency-Key"
META_KEY = "HTTP_IDEMPOTENCY_KEY"  # the header in request.META (see lms.web.http)


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    replayed: bool = False


def key_problem(key: str | None) -> str | None:
    """Why ``key`` (the header's value, None when absent) cannot be an ``Idempotency-Key``."""
    if key is not None and not 1 <= len(key) <= MAX_KEY_LENGTH:
        return f"Must be 1 to {MAX_KEY_LENGTH} characters long."
    return None


def idempotent(
    *, store, org, membership, key: str | None, write: Callable[[], tuple[int, Any]]
) -> Answer:
    """``write()`` (status, body) once per (membership, key) within ``TTL``."""
    if key is None:
        return Answer(*write())
    return remembered(
        rows=store.objects.for_org(org).filter(membership=membership),
        key=key,
        ttl=TTL,
        write=write,
        remember=lambda status, body: store.objects.create(
            org=org, membership=membership, key=key, response_status=status, response_body=body
        ),
    )


def remembered(
    *,
    rows,
    key: str,
    ttl: timedelta,
    write: Callable[[], tuple[int, Any]],
    remember: Callable[[int, Any], object],
    expired=None,
    races: tuple[type[Exception], ...] = (IntegrityError,),
    reopen: Callable[[Any], Any | None] = lambda body: body,
) -> Answer:
    """The answer stored in ``rows`` for ``key`` within ``ttl``; else ``write()``, and its
    answer stored by ``remember(status, body)`` in the same transaction.

    Records older than ``ttl`` in ``expired`` (``rows`` when not given) are deleted as a new
    one is stored, and one found expired on reading is deleted then: what an expired record
    held does not stay behind it. ``races`` are the errors a write that lost a race with the
    same key meets; the winner's answer is answered then, if there is one. ``reopen`` turns a
    stored body back into the answer's (None when it cannot: no answer to replay)."""
    replay = _replay(rows, key, ttl, reopen)
    if replay is not None:
        return replay
    try:
        with transaction.atomic():
            status, body = write()
            purged = rows if expired is None else expired
            purged.filter(created_at__lt=timezone.now() - ttl).delete()
            remember(status, body)
        return Answer(status, body)
    except races:
        replay = _replay(rows, key, ttl, reopen)
        if replay is None:
            raise
        return replay


def _replay(rows, key: str, ttl: timedelta, reopen: Callable[[Any], Any | None]) -> Answer | None:
    record = rows.filter(key=key).only("created_at", "response_status", "response_body").first()
    if record is None:
        return None
    if record.created_at < timezone.now() - ttl:
        rows.filter(pk=record.pk).delete()
        return None
    body = reopen(record.response_body)
    if body is None:
        return None
    return Answer(record.response_status, body, replayed=True)
