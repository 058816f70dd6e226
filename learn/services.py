"""Writes of the learning area: recording progress, enrolling and unenrolling."""

from __future__ import annotations

import enum
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from django.db import transaction
from django.utils import timezone

from learn import completion, standing
from learn.course_completion import complete_course_if_done
from learn.errors import NotEnrolled
from learn.events import course_event, emit_course_event
from learn.models import Course, Enrollment, Progress, ProgressReport
from learn.selectors import locked_progress, progress_target
from lms.db import statements
from lms.errors import NotFound
from lms.events import Event, emit_many
from lms.ids import uuid7
from lms.tenancy import not_found
from organizations.api import Membership, Organization, invite_course_ids


def record_progress(
    *,
    org: Organization,
    membership: Membership,
    activity_id: uuid.UUID,
    reports: list[completion.Received],
    request_id: str,
) -> completion.Outcome:
    """Store every report (validated at the edge) and decide the activity's status from its
    rule and every report so far, and what remains of it under the rule; complete the course
    when this completes its last listed activity. Unknown, foreign or unpublished activity:
    NotFound; not enrolled: NotEnrolled.

    The writes are one transaction, the caller's when there is one (an idempotent view
    stores its answer in it), so a failure stores nothing."""
    activity = progress_target(org=org, membership=membership, activity_id=activity_id)
    if not activity.enrolled:  # type: ignore[attr-defined]
        raise NotEnrolled()
    return _record(org, membership, activity, reports, request_id)


@transaction.atomic
def _record(org, membership, activity, reports, request_id) -> completion.Outcome:
    now = timezone.now()
    row, started = _locked_progress(org=org, membership=membership, activity=activity, now=now)
    # Written out (lms.db.statements): the ORM built and compiled both statements per report.
    _INSERT_REPORTS(
        (
            # A label for the admin; the payload keeps the type exactly as sent.
            (
                uuid7(),
                org.id,
                now,
                now,
                row.id,
                position,
                _label(completion.report_type(received.payload)),
                received.payload,
                request_id,
            )
            for position, received in enumerate(reports)
        ),
    )
    if row.status != completion.COMPLETED:
        # A completed activity stays completed: its reports are stored, its state is final.
        row.state = completion.visit(row.state, [received.report for received in reports])
    outcome = completion.outcome(activity.completion_settings, row.state, previous=row.status)
    first_completion = outcome.status == completion.COMPLETED and row.completed_at is None
    if first_completion:
        row.completed_at = now
    row.status, row.progress = outcome.status, outcome.progress
    # The row, and the learner's standing in the course (the roster's), which is also the
    # report's lock on the enrolment: an unenrolment committed since the access was read
    # has removed it.
    if not standing.reported(
        org_id=org.id,
        membership_id=membership.id,
        course_id=activity.course_id,
        activity_id=activity.id,
        now=now,
        started=started,
        completed=first_completion,
        progress=(
            row.id,
            {
                "state": row.state,
                "status": row.status,
                "progress": row.progress,
                "completed_at": row.completed_at,
                "updated_at": now,
            },
        ),
    ):
        raise NotEnrolled()
    if first_completion:
        # Once: the row is locked, so of concurrent reports one sees it not completed yet.
        emit_course_event(
            "activity.completed",
            org_id=org.id,
            membership=membership,
            course_id=activity.course_id,
            occurred_at=now,
            ids={"activityId": activity.id},
        )
    if outcome.status == completion.COMPLETED and not activity.course_completed:
        # A stored course completion latches: read with the activity, it spares the
        # enrollment lock and the count on every later report of a completed course.
        complete_course_if_done(
            org=org, membership=membership, course_id=activity.course_id, now=now
        )
    return outcome


def _label(kind: str | None) -> str:
    """A report's type as a text column can hold it: at most 100 characters, without NUL
    and with an unpaired surrogate (valid JSON, not a character) as U+FFFD."""
    if not kind:
        return ""
    text = kind.replace("\x00", "")[:100]
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


# The columns of a report ``_record`` gives; any other one is filled with its default.
_REPORT_COLUMNS = (
    "id",
    "org",
    "created_at",
    "updated_at",
    "progress",
    "position",
    "type",
    "payload",
    "request_id",
)
# Checked at import: every column not given has a default (``lms.db.statements``).
_INSERT_REPORTS = statements.Insert(ProgressReport, _REPORT_COLUMNS)


def _locked_progress(
    *, org: Organization, membership: Membership, activity, now
) -> tuple[Progress, bool]:
    """The learner's progress row on the activity, locked until the transaction ends, and
    whether this call made it.

    The first report creates it with INSERT ... ON CONFLICT DO NOTHING, so simultaneous first
    reports create one row and then queue on its lock like every later report; the row made
    is the one whose id this call gave.
    """
    lookup = {"org_id": org.id, "membership_id": membership.id, "activity_id": activity.id}
    found = locked_progress(**lookup)
    if found is not None:
        return found, False
    made = Progress(
        org=org,
        membership=membership,
        activity_id=activity.id,
        status=Progress.Status.IN_PROGRESS,
        progress=0.0,
        state=completion.empty_state(),
        started_at=now,
    )
    Progress.objects.bulk_create([made], ignore_conflicts=True)
    row = locked_progress(**lookup)
    assert row is not None  # inserted above, or by the report it conflicted with
    return row, row.id == made.id


class Unset(enum.Enum):
    """The type of ``UNSET``: a due date not given (kept), as opposed to None (cleared)."""

    UNSET = "unset"


UNSET = Unset.UNSET


class Enrolled(NamedTuple):
    """Of the members an enrolment was asked for, in the order asked: those it enrolled and
    those who already were (by membership id)."""

    enrolled: list[uuid.UUID]
    already_enrolled: list[uuid.UUID]


class UnknownMembers(ValueError):
    """Ids that are no membership of the organization (``ids``, in the order given)."""

    def __init__(self, ids: list[uuid.UUID]):
        super().__init__(f"No membership of the organization with the id(s) {ids}.")
        self.ids = ids


# New enrollments, all of a call's in one statement; a member enrolled already is left out
# (the unique constraint on organization, member and course).
_INSERT_ENROLLMENTS = statements.Insert(
    Enrollment,
    ("id", "org_id", "course_id", "membership_id", "due_at"),
    ignore_conflicts=True,
    batch=True,
)


@transaction.atomic
def enroll_members(
    *,
    org_id: uuid.UUID,
    course_id: uuid.UUID,
    membership_ids: Sequence[uuid.UUID],
    due_at: datetime | Unset | None = UNSET,
    depth: int = 0,
) -> Enrolled:
    """Enrol the members (membership ids of the organization; a repeated one counts once)
    in the organization's course, published or not: the one enrolment service, which the
    API, the admin, commands, automations and an invite's accept all call. ``depth`` is that
    of the automation run that enrols (0 for a person).

    A member enrolled already keeps the enrolment; ``due_at`` given (a time, or None for no
    date) replaces their due date, UNSET keeps it. Each new enrolment is one
    ``enrollment.created`` event, exactly once however many enrolments race: the insert
    decides (INSERT ... ON CONFLICT DO NOTHING; the rows this call inserted are found by
    the ids it made). One transaction and a constant number of queries whatever the number
    of members. An unknown or foreign course: NotFound; an id that is no membership of the
    organization: UnknownMembers, and nobody is enrolled."""
    wanted = list(dict.fromkeys(membership_ids))
    if not Course.objects.for_org(org_id).filter(id=course_id).exists():
        raise not_found(Course)
    emails = dict(
        Membership.objects.for_org(org_id)
        .filter(id__in=wanted)
        .values_list("id", "user__email")
        .order_by()
    )
    unknown = [member_id for member_id in wanted if member_id not in emails]
    if unknown:
        raise UnknownMembers(unknown)
    if not wanted:
        return Enrolled([], [])
    made = {member_id: uuid7() for member_id in wanted}
    # In the members' order, whatever the caller's: two calls inserting the same members
    # wait on each other's rows in one order, never in a cycle (a deadlock).
    _INSERT_ENROLLMENTS(
        (made[member_id], org_id, course_id, member_id, None if due_at is UNSET else due_at)
        for member_id in sorted(wanted)
    )
    inserted = dict(
        Enrollment.objects.for_org(org_id)
        .filter(id__in=made.values())
        .values_list("membership_id", "created_at")
        .order_by()
    )
    result = Enrolled(
        [member_id for member_id in wanted if member_id in inserted],
        [member_id for member_id in wanted if member_id not in inserted],
    )
    if result.already_enrolled and due_at is not UNSET:
        Enrollment.objects.for_org(org_id).filter(
            course_id=course_id, membership_id__in=result.already_enrolled
        ).update(due_at=due_at, updated_at=timezone.now())
    if result.enrolled:
        standing.enrolled(org_id, course_id, [made[member_id] for member_id in result.enrolled])
        emit_many(
            [
                course_event(
                    "enrollment.created",
                    org_id=org_id,
                    member_id=member_id,
                    email=emails[member_id],
                    course_id=course_id,
                    occurred_at=inserted[member_id],
                    depth=depth,
                    ids={"enrollmentId": made[member_id]},
                )
                for member_id in result.enrolled
            ]
        )
    return result


@transaction.atomic
def unenroll(*, org_id: uuid.UUID, course_id: uuid.UUID, membership_id: uuid.UUID) -> None:
    """Delete the member's enrolment in the course. Their progress, reports and course
    completion stay, so that enrolled again they answer what they answered before. Not
    enrolled (or an unknown id), or an unknown or foreign course: NotFound, and nothing
    changes. Of racing unenrolments one
    deletes the row and the others are NotFound (the row is locked first)."""
    found = list(
        Enrollment.objects.for_org(org_id)
        .select_for_update()
        .filter(course_id=course_id, membership_id=membership_id)
        .values_list("id", flat=True)
    )
    if not found:
        if not Course.objects.for_org(org_id).filter(id=course_id).exists():
            raise not_found(Course)
        raise NotFound("That member is not enrolled in this course.")
    standing.unenrolled(org_id, course_id, found)
    Enrollment.objects.for_org(org_id).filter(id__in=found).delete()


def enroll(
    *,
    membership: Membership,
    course: Course,
    due_at: datetime | Unset | None = UNSET,
    depth: int = 0,
) -> Enrollment:
    """The member's enrollment in the course: ``enroll_members`` of the one member (enrolling
    again changes nothing but a given due date), then the row."""
    enroll_members(
        org_id=course.org_id,
        course_id=course.id,
        membership_ids=[membership.id],
        due_at=due_at,
        depth=depth,
    )
    return Enrollment.objects.for_org(course.org_id).get(
        course_id=course.id, membership_id=membership.id
    )


def enroll_invitee(event: Event) -> None:
    """The receiver of ``invite.accepted`` (registered by ``LearnConfig.ready``; identity
    does not know this app): enrol the member the accept made or found in each of the
    invite's courses (CONTRACT 9.2), through ``enroll_members``, in the accept's transaction.
    A course deleted since the invite was made is no longer among them."""
    if event.type != "invite.accepted":
        return
    member_id = uuid.UUID(event.data["memberId"])
    for course_id in invite_course_ids(event.org_id, event.data["inviteId"]):
        enroll_members(
            org_id=event.org_id,
            course_id=course_id,
            membership_ids=[member_id],
            depth=event.depth,
        )
