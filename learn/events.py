"""The learn app's events (contract 7.2): each names its course and the member, by the
membership's id and the user's e-mail address, after the ids of its own subject."""

from __future__ import annotations

import uuid
from datetime import datetime

from lms.events import Event, emit
from organizations.api import Membership


def emit_course_event(
    event_type: str,
    *,
    org_id: uuid.UUID,
    membership: Membership,
    course_id: uuid.UUID,
    occurred_at: datetime,
    depth: int = 0,
    ids: dict[str, uuid.UUID] | None = None,
) -> None:
    """Emit ``event_type`` with ``{**ids, courseId, memberId, email}`` as its data."""
    emit(
        Event(
            type=event_type,
            org_id=org_id,
            occurred_at=occurred_at,
            depth=depth,
            data={
                **{key: str(value) for key, value in (ids or {}).items()},
                "courseId": str(course_id),
                "memberId": str(membership.id),
                "email": membership.user.email,
            },
        )
    )
