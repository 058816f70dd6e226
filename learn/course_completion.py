"""Course completion: a learner's course becomes completed when every activity it lists
(as 4.4 lists them) is completed for them. It is stored once, with the time, and latches:
activities staff publish later do not undo it, and it is never decided twice."""

from __future__ import annotations

import uuid
from datetime import datetime

from learn import standing
from learn.events import emit_course_event
from learn.models import CompletionSequence, CourseCompletion
from learn.selectors import completion_counts
from lms.db import statements
from organizations.api import Membership, Organization


def complete_course_if_done(
    *, org: Organization, membership: Membership, course_id: uuid.UUID, now: datetime
) -> CourseCompletion | None:
    """Store the member's completion of the course, and emit ``course.completed``, if every
    listed activity is completed and the course is not completed yet. The new completion,
    or None.

    Called inside the transaction that just recorded an activity as completed, after the
    report locked the learner's enrollment row (``learn.standing.reported``, which found
    them enrolled) and before anything is counted, so two reports completing the last
    two activities at once are decided one after the other: the second counts after the
    first has committed and sees both completed, the first did not, and the completion
    (unique per learner and course as a backstop) is written once.

    The completion's feed position is taken last (the organization's ``CompletionSequence``
    row, locked from then until the commit): completions of one organization are given
    positions one after the other, each once the one before it is committed, so the feed's
    cursor (a position) never passes a completion still to become visible. What follows in
    the transaction (the idempotency record of the answer) is one insert.
    """
    counts = completion_counts(org_id=org.id, membership_id=membership.id, course_id=course_id)
    if counts is None:  # nothing listed
        return None
    listed, done, stored = counts
    if stored or done < listed:
        return None
    standing.course_completed(
        org_id=org.id, membership_id=membership.id, course_id=course_id, at=now
    )
    emit_course_event(
        "course.completed",
        org_id=org.id,
        membership=membership,
        course_id=course_id,
        occurred_at=now,
    )
    # Last: the feed's position. The organization's sequence row stays locked until this
    # transaction commits, so a later completion is given the next position only once this
    # one is visible, whatever the order of their times (9.6).
    position = statements.next_number(CompletionSequence, org_id=org.id, counter="last")
    return CourseCompletion.objects.create(
        org=org,
        membership=membership,
        course_id=course_id,
        completed_at=now,
        position=position,
    )
