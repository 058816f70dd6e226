"""The learn app's events (CONTRACT 7.2): each names its course and the member, by the
membership's id and the user's e-mail address, after the ids of its own subject."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from lms.events import Event, emit
from organizations.api import Membership


def course_event(
    event_type: str,
    *,
    org_id: uuid.UUID,
    member_id: uuid.UUID,
    email: str,
    course_id: uuid.UUID,
    occurred_at: datetime,
    depth: int = 0,
    ids: dict[str, uuid.UUID] | None = None,
) -> Event:
    """``event_type`` with ``{**ids, courseId, memberId, email}`` as its data."""
    return Event(
        type=event_type,
        org_id=org_id,
        occurred_at=occurred_at,
        depth=depth,
        data={
            **{key: str(value) for key, value in (ids or {}).items()},
            "courseId": str(course_id),
            "memberId": str(member_id),
            "email": email,
        },
    )


def emit_course_event(event_type: str, *, membership: Membership, **fields: Any) -> None:
    """Emit ``event_type`` of ``membership``: ``course_event`` with ``fields`` (``org_id``,
    ``course_id``, ``occurred_at`` and the optional ``depth`` and ``ids``)."""
    emit(course_event(event_type, member_id=membership.id, email=membership.user.email, **fields))
