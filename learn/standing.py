"""What an enrolment's standing in its course depends on, told by the enrolment service.

``learn.services.enroll_members`` calls ``enrolled`` with the enrolments it has just
inserted, and ``learn.services.unenroll`` calls ``unenrolled`` with the enrolments it is
about to delete (still there when it is called), each inside the service's transaction: a
failure here rolls the enrolment or unenrolment back. Both are set-based: one call for every
enrolment of the write, whatever their number, in a constant number of queries.
Nothing is kept per enrolment yet, so both do nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence


def enrolled(org_id: uuid.UUID, course_id: uuid.UUID, enrollment_ids: Sequence[uuid.UUID]) -> None:
    """The enrolments ``enrollment_ids`` of ``course_id`` were just inserted (never empty;
    a re-enrolment's learner may have progress kept from an earlier enrolment)."""


def unenrolled(
    org_id: uuid.UUID, course_id: uuid.UUID, enrollment_ids: Sequence[uuid.UUID]
) -> None:
    """The enrolments ``enrollment_ids`` of ``course_id`` are about to be deleted (never
    empty); the learners' progress rows stay."""
