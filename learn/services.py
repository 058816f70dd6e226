"""Writes of the learning area: recording progress, enrolling."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from learn import completion
from learn.course_completion import complete_course_if_done
from learn.errors import NotEnrolled
from learn.models import Course, Enrollment, IdempotencyRecord, Progress, ProgressReport
from learn.selectors import progress_target
from lms.errors import validation_error
from organizations.models import Membership, Organization

IDEMPOTENCY_TTL = timedelta(hours=24)


@dataclass(frozen=True)
class ProgressAnswer:
    """What ``POST /api/learn/progress`` answers; ``replayed`` when it is a stored answer."""

    status_code: int
    body: dict[str, Any]
    replayed: bool = False


def reports_errors(reports: list[Any]) -> dict[str, list[str]]:
    """Validation details of a request's reports, keyed ``reports.N.field``."""
    details: dict[str, list[str]] = {}
    for index, errors in completion.validate_reports(reports).items():
        for field, messages in errors.items():
            key = f"reports.{index}" if field == "nonFieldErrors" else f"reports.{index}.{field}"
            details[key] = messages
    return details


def record_progress(
    *,
    org: Organization,
    membership: Membership,
    activity_id: uuid.UUID,
    reports: list[dict[str, Any]],
    request_id: str,
    idempotency_key: str | None = None,
) -> ProgressAnswer:
    """Store every report and answer the status the activity's rule decides.

    The whole request is validated before anything is stored. A retry with the caller's
    ``idempotency_key`` within 24 hours answers the first answer and stores nothing. When two
    requests race on one key, the unique constraint refuses the second's record, which rolls
    its reports back and answers the first answer.
    """
    details = reports_errors(reports)
    if details:
        raise validation_error(details)
    if idempotency_key is not None:
        replay = _replay(org=org, membership=membership, key=idempotency_key)
        if replay is not None:
            return replay
    try:
        return _record(
            org=org,
            membership=membership,
            activity_id=activity_id,
            reports=reports,
            request_id=request_id,
            idempotency_key=idempotency_key,
        )
    except IntegrityError:
        replay = None
        if idempotency_key is not None:
            replay = _replay(org=org, membership=membership, key=idempotency_key)
        if replay is None:
            raise
        return replay


def _replay(*, org: Organization, membership: Membership, key: str) -> ProgressAnswer | None:
    record = (
        IdempotencyRecord.objects.for_org(org)
        .filter(membership=membership, key=key, created_at__gte=timezone.now() - IDEMPOTENCY_TTL)
        .only("response_status", "response_body")
        .first()
    )
    if record is None:
        return None
    return ProgressAnswer(record.response_status, record.response_body, replayed=True)


@transaction.atomic
def _record(
    *,
    org: Organization,
    membership: Membership,
    activity_id: uuid.UUID,
    reports: list[dict[str, Any]],
    request_id: str,
    idempotency_key: str | None,
) -> ProgressAnswer:
    activity = progress_target(org=org, membership=membership, activity_id=activity_id)
    if not activity.enrolled:
        raise NotEnrolled()
    now = timezone.now()
    row = _locked_progress(org=org, membership=membership, activity=activity, now=now)
    ProgressReport.objects.bulk_create(
        [
            ProgressReport(
                org=org,
                progress=row,
                position=position,
                # A label for the admin; the payload keeps the type exactly as sent.
                type=_label(completion.report_type(report)),
                payload=report,
                request_id=request_id,
            )
            for position, report in enumerate(reports)
        ]
    )
    if row.status != completion.COMPLETED:
        # A completed activity stays completed: its reports are stored, its state is final.
        row.state = completion.visit(row.state, reports)
    decision = completion.decide(activity.settings, row.state, previous=row.status)
    if decision.status == completion.COMPLETED and row.completed_at is None:
        row.completed_at = now
    row.status, row.progress = decision.status, decision.progress
    row.save(update_fields=["state", "status", "progress", "completed_at", "updated_at"])
    if decision.status == completion.COMPLETED:
        complete_course_if_done(
            org=org, membership=membership, course_id=activity.course_id, now=now
        )

    answer = ProgressAnswer(200, {"status": decision.status, "progress": decision.progress})
    if idempotency_key is not None:
        expired = IdempotencyRecord.objects.for_org(org).filter(
            membership=membership, created_at__lt=now - IDEMPOTENCY_TTL
        )
        expired.delete()
        IdempotencyRecord.objects.create(
            org=org,
            membership=membership,
            key=idempotency_key,
            response_status=answer.status_code,
            response_body=answer.body,
        )
    return answer


def _label(kind: str | None) -> str:
    """A report's type as a text column can hold it: at most 100 characters, without NUL
    and with an unpaired surrogate (valid JSON, not a character) as U+FFFD."""
    if not kind:
        return ""
    text = kind.replace("\x00", "")[:100]
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _locked_progress(*, org: Organization, membership: Membership, activity, now) -> Progress:
    """The learner's progress row on the activity, locked until the transaction ends.

    The first report creates it with INSERT ... ON CONFLICT DO NOTHING, so simultaneous first
    reports create one row and then queue on its lock like every later report.
    """
    rows = Progress.objects.for_org(org).select_for_update()
    lookup = {"membership": membership, "activity_id": activity.id}
    row = rows.filter(**lookup).first()
    if row is not None:
        return row
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
    return rows.get(**lookup)


@transaction.atomic
def enroll(*, membership: Membership, course: Course) -> Enrollment:
    """The member's enrollment in the course (created once; enrolling again is a no-op)."""
    if membership.org_id != course.org_id:
        raise ValueError("A member can only be enrolled in a course of their organization.")
    enrollment, _ = Enrollment.objects.get_or_create(
        org_id=course.org_id, membership=membership, course=course
    )
    return enrollment
