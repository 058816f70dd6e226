"""Domain events: something happened that other parts of the service may act on.

The core knows no feature. A feature that acts on events registers a receiver (from its
``AppConfig.ready``); a feature where an event happens calls ``emit`` inside the transaction
that makes it happen, so that whatever a receiver records commits or rolls back with it.
Receivers must only record (rows, ``transaction.on_commit`` hand-offs); they never do slow
work in the caller's request. A write that makes many events at once (an enrolment of many
members) calls ``emit_many``: a receiver registered with ``batch_receiver`` gets them in one
call, so that it records them in a constant number of queries.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from lms.ids import uuid7


@dataclass(frozen=True)
class Event:
    """One occurrence. ``type`` is a trigger name (``activity.completed``, ...); ``data`` is
    the event's payload as API consumers see it (camelCase keys, ids as strings); ``depth``
    counts how many automation actions led to it (0 for a person's own act)."""

    type: str
    org_id: uuid.UUID
    data: dict[str, Any]
    depth: int = 0
    id: uuid.UUID = field(default_factory=uuid7)
    occurred_at: datetime = field(default_factory=timezone.now)


Receiver = Callable[[Event], None]
BatchReceiver = Callable[[Sequence[Event]], None]

_receivers: list[Receiver] = []
_batch_receivers: list[BatchReceiver] = []


def receiver(func: Receiver) -> Receiver:
    """Register ``func`` to be called with every emitted event (idempotent)."""
    if func not in _receivers:
        _receivers.append(func)
    return func


def batch_receiver(func: BatchReceiver) -> BatchReceiver:
    """Register ``func`` to be called once per ``emit`` or ``emit_many`` with all of its
    events, in order (idempotent)."""
    if func not in _batch_receivers:
        _batch_receivers.append(func)
    return func


def emit(event: Event) -> None:
    """Hand ``event`` to every receiver, inside the caller's transaction."""
    emit_many([event])


def emit_many(events: Sequence[Event]) -> None:
    """Hand ``events`` (made by one write, in order) to every receiver, inside the caller's
    transaction: each ``receiver`` once per event, each ``batch_receiver`` once with all."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("emit() must be called inside the transaction that writes the event")
    if not events:
        return
    for func in _receivers:
        for event in events:
            func(event)
    for batch in _batch_receivers:
        batch(events)
