"""Writes of the learning area: recording progress, enrolling."""

from __future__ import annotations

import uuid

from django.db import transaction
from django.utils import timezone

from learn import completion
from learn.course_completion import complete_course_if_done
from learn.errors import NotEnrolled
from learn.events import emit_course_event
from learn.models import Course, Enrollment, Progress, ProgressReport
from learn.selectors import progress_target
from lms.db import statements
from lms.db.compiled import Compiled
from lms.ids import uuid7
from organizations.api import Membership, Organization


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
    row = _locked_progress(org=org, membership=membership, activity=activity, now=now)
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
    statements.update(
        Progress,
        org_id=org.id,
        pk=row.id,
        state=row.state,
        status=row.status,
        progress=row.progress,
        completed_at=row.completed_at,
        updated_at=now,
    )
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
# The learner's progress row on an activity, locked (FOR UPDATE on PostgreSQL); SQL compiled
# once per process.
_PROGRESS_COLUMNS = tuple(field.attname for field in Progress._meta.concrete_fields)
_LOCKED_PROGRESS = Compiled(
    lambda org_id, membership_id, activity_id: (
        Progress.objects.for_org(org_id)
        .select_for_update()
        .filter(membership_id=membership_id, activity_id=activity_id)
        .values_list(*_PROGRESS_COLUMNS)
    ),
    prepare=True,
)


def _locked_progress(*, org: Organization, membership: Membership, activity, now) -> Progress:
    """The learner's progress row on the activity, locked until the transaction ends.

    The first report creates it with INSERT ... ON CONFLICT DO NOTHING, so simultaneous first
    reports create one row and then queue on its lock like every later report.
    """
    lookup = {"org_id": org.id, "membership_id": membership.id, "activity_id": activity.id}
    found = _LOCKED_PROGRESS.records(Progress, **lookup)
    if found:
        return found[0]
    Progress.objects.bulk_create(
        [
            Progress(
                org=org,
                membership=membership,
                activity_id=activity.id,
                status=Progress.Status.IN_PROGRESS,
                progress=0.0,
                state=completion.empty_state(),
                started_at=now,
            )
        ],
        ignore_conflicts=True,
    )
    return _LOCKED_PROGRESS.records(Progress, **lookup)[0]


@transaction.atomic
def enroll(*, membership: Membership, course: Course, depth: int = 0) -> Enrollment:
    """The member's enrollment in the course, created once (enrolling again is a no-op) as
    an ``enrollment.created`` event. The admin, commands and automations all enroll here;
    ``depth`` is that of the automation run that enrolls (0 for a person)."""
    if membership.org_id != course.org_id:
        raise ValueError("A member can only be enrolled in a course of their organization.")
    enrollment, created = Enrollment.objects.get_or_create(
        org_id=course.org_id, membership=membership, course=course
    )
    if created:
        emit_course_event(
            "enrollment.created",
            org_id=course.org_id,
            membership=membership,
            course_id=course.id,
            occurred_at=enrollment.created_at,
            depth=depth,
            ids={"enrollmentId": enrollment.id},
        )
    return enrollment
