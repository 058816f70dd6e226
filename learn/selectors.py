"""Reads of the learning area worth naming, answering domain values (models, ids, times,
dataclasses). Every query is scoped to the caller's org. The reads on hot paths that answer
the wire's text (the activity listing, a course's outline, the caller's courses) are in
``learn.wire_reads``, built on the helpers here."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import (
    Count,
    Exists,
    FilteredRelation,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.db.models.functions import Coalesce

from learn import completion
from learn.completion import COMPLETED, IN_PROGRESS, NOT_STARTED
from learn.errors import NotEnrolled
from learn.models import (
    Activity,
    Course,
    CourseCompletion,
    Enrollment,
    Progress,
)
from lms.db.compiled import Compiled
from lms.tenancy import OrgRef, get_or_404
from organizations.api import Membership, Organization, member_ids, member_ids_by_email

# A membership as a query takes one: the record, or its id (the compiled reads pass ids).
MemberRef = Membership | uuid.UUID


def is_enrolled(org: OrgRef, membership: MemberRef, course_ref) -> Exists:
    """Whether the member is enrolled in ``course_ref`` (an id, or an ``OuterRef``)."""
    return Exists(Enrollment.objects.for_org(org).filter(membership=membership, course=course_ref))


def stored_completion(org: OrgRef, membership: MemberRef, course_ref) -> QuerySet[CourseCompletion]:
    """The member's stored completion of ``course_ref`` (an id, or an ``OuterRef``)."""
    return CourseCompletion.objects.for_org(org).filter(membership=membership, course=course_ref)


def published_activities(org: OrgRef) -> QuerySet[Activity]:
    """Activities a learner may see: published, in a published module of a published course."""
    return Activity.objects.for_org(org).filter(
        published=True, module__published=True, course__published=True
    )


# The activity progress is reported on, with ``enrolled`` and ``course_completed``; SQL
# compiled once per process.
_PROGRESS_TARGET = Compiled(
    lambda org_id, membership_id, activity_id: (
        published_activities(org_id)
        .filter(id=activity_id)
        .annotate(
            enrolled=is_enrolled(org_id, membership_id, OuterRef("course_id")),
            course_completed=Exists(
                stored_completion(org_id, membership_id, OuterRef("course_id"))
            ),
        )
        .values_list("id", "course_id", "settings", "enrolled", "course_completed")
    ),
    prepare=True,
)


def progress_target(*, org: Organization, membership: Membership, activity_id: object) -> Activity:
    """The published activity progress is reported on (its id, course and settings),
    annotated with ``enrolled`` and ``course_completed`` (whether the member's completion
    of its course is stored), in one query. Unknown, foreign, unpublished or a malformed
    id: NotFound."""
    return _PROGRESS_TARGET.record_or_404(
        Activity, org_id=org.id, membership_id=membership.id, activity_id=activity_id
    )


# The learner's progress row on an activity, locked (FOR UPDATE on PostgreSQL), every column.
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


def locked_progress(
    *, org_id: uuid.UUID, membership_id: uuid.UUID, activity_id: uuid.UUID
) -> Progress | None:
    """The member's progress row on the activity, locked until the transaction ends, or
    None. One query, its SQL compiled once per process."""
    found = _LOCKED_PROGRESS.records(
        Progress, org_id=org_id, membership_id=membership_id, activity_id=activity_id
    )
    return found[0] if found else None


def published_courses(org: OrgRef, membership: MemberRef) -> QuerySet[Course]:
    """The organization's published courses, each with ``enrolled``: whether the member is."""
    return (
        Course.objects.for_org(org)
        .filter(published=True)
        .annotate(enrolled=is_enrolled(org, membership, OuterRef("pk")))
    )


def enrolled_course(
    *, org: Organization, membership: Membership, course_id: uuid.UUID, **annotations
) -> Course:
    """The published course the member is enrolled in, with ``annotations``, in one query.
    Unknown, foreign or unpublished: NotFound; not enrolled: NotEnrolled."""
    course = get_or_404(
        published_courses(org, membership).annotate(**annotations).only("id"), id=course_id
    )
    if not course.enrolled:
        raise NotEnrolled()
    return course


def listed_activities(org: OrgRef, course_id: uuid.UUID | OuterRef) -> QuerySet[Activity]:
    """A published course's activities as 4.4 lists them: published, of published modules,
    by module seq then seq."""
    return (
        Activity.objects.for_org(org)
        .filter(course_id=course_id, published=True, module__published=True)
        .order_by("module__seq", "seq", "id")
    )


@dataclass(frozen=True)
class ActivityProgress:
    activity_id: uuid.UUID
    status: str
    progress: float
    remaining: completion.Remaining


@dataclass(frozen=True)
class CourseProgress:
    course_id: uuid.UUID
    status: str
    progress: float
    completed_at: datetime | None
    activities: list[ActivityProgress]


def activity_standing(
    settings: object, status: str | None, progress: float | None, state: dict[str, Any] | None
) -> tuple[str, float, completion.Remaining]:
    """An activity's status, progress and remaining for the member, from its stored
    settings and the member's progress row (status, progress and state; None without one):
    the status and progress the last report answered, what remains under the rule now."""
    status = status or NOT_STARTED
    rules, _ = completion.read_settings(settings)
    return status, progress or 0.0, completion.remaining(rules, state, status)


def course_status(completed_at: object, started: bool) -> str:
    """A course's status for the member: completed once its completion is stored (it
    latches), in-progress once a listed activity has a report, else not-started."""
    if completed_at is not None:
        return COMPLETED
    return IN_PROGRESS if started else NOT_STARTED


def course_progress(
    *, org: Organization, membership: Membership, course_id: uuid.UUID
) -> CourseProgress:
    """The member's progress on a course and on each activity it lists, in listing order.

    An activity's status and progress are what the last progress report answered
    (not-started, 0 without one), its remaining what its rule still asks. The course is
    completed once its completion is stored (it latches); ``progress`` is the fraction of
    listed activities completed now. Two queries whatever the number of activities; access
    as for the listing.
    """
    completion_of = stored_completion(org, membership, OuterRef("pk"))
    course = enrolled_course(
        org=org,
        membership=membership,
        course_id=course_id,
        completed_at=Subquery(completion_of.values("completed_at")[:1]),
    )
    rows = (
        listed_activities(org, course.id)
        .annotate(
            mine=FilteredRelation(
                "progress", condition=Q(progress__org=org, progress__membership=membership)
            )
        )
        .values_list("id", "settings", "mine__status", "mine__progress", "mine__state")
    )
    activities = [
        ActivityProgress(activity_id, *activity_standing(settings, status, progress, state))
        for activity_id, settings, status, progress, state in rows
    ]
    done = sum(activity.status == COMPLETED for activity in activities)
    started = any(activity.status != NOT_STARTED for activity in activities)
    return CourseProgress(
        course_id=course.id,
        status=course_status(course.completed_at, started),  # type: ignore[attr-defined]
        progress=fraction_done(done, len(activities)),
        completed_at=course.completed_at,  # type: ignore[attr-defined]
        activities=activities,
    )


def fraction_done(done: int, total: int) -> float:
    """done / total to three decimals, 1.0 only when all are done (as 4.3 rounds)."""
    if not total:
        return 0.0
    return 1.0 if done == total else min(round(done / total, 3), 0.999)


def members_named(*, org_id: uuid.UUID, data: dict) -> list[uuid.UUID]:
    """The membership ids an enrolment names (``memberIds``, or ``emails`` compared in any
    case), in order, in one query; a 400 naming each id or address that is no member's of
    the organization (``memberIds.3``, ``emails.0``)."""
    if "memberIds" in data:
        ids = data["memberIds"]
        known = member_ids(org_id, ids)
        found = [member_id if member_id in known else None for member_id in ids]
        field, message = "memberIds", "No member of the organization has this id."
    else:
        by_email = member_ids_by_email(org_id, data["emails"])
        found = [by_email.get(email.lower()) for email in data["emails"]]
        field, message = "emails", "No member of the organization has this e-mail address."
    unknown = {f"{field}.{index}": [message] for index, item in enumerate(found) if item is None}
    if unknown:
        raise DjangoValidationError(unknown)
    return found  # type: ignore[return-value]  # none is None: raised above


def _completion_counts(org_id, membership_id, course_id) -> QuerySet:
    """One row: how many activities the course lists, how many of them the member
    completed, and (a subquery that does not depend on the row) whether the completion is
    already stored. No row when the course lists none."""
    completed = Progress.objects.for_org(org_id).filter(
        membership_id=membership_id, activity=OuterRef("pk"), status=Progress.Status.COMPLETED
    )
    stored = stored_completion(org_id, membership_id, course_id)
    return (
        listed_activities(org_id, course_id)
        .order_by()
        .values("course_id")  # one group: every listed activity is of the course
        .annotate(
            listed=Count("id"),
            done=Count("id", filter=Q(Exists(completed))),
            stored=Count("id", filter=Q(Exists(stored))),
        )
        .values_list("listed", "done", "stored")
    )


_COMPLETION_COUNTS = Compiled(_completion_counts, prepare=True)


def completion_counts(
    *, org_id: uuid.UUID, membership_id: uuid.UUID, course_id: uuid.UUID
) -> tuple[int, int, int] | None:
    """How many activities the course lists, how many of them the member completed, and
    whether (1) or not (0) their completion of it is stored; None when it lists none. One
    query, its SQL compiled once per process: the course completion's count, read after
    the report's lock (``learn.course_completion``)."""
    return _COMPLETION_COUNTS.first(org_id=org_id, membership_id=membership_id, course_id=course_id)


def counted(queryset: QuerySet) -> Coalesce:
    """How many rows ``queryset`` (correlated to the outer row) has, as a scalar subquery."""
    counted = queryset.order_by().values("org_id").annotate(n=Count("id")).values("n")
    return Coalesce(Subquery(counted[:1]), 0)
