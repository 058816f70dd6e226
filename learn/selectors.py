"""Reads of the learning area worth naming. Every query is scoped to the caller's org."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, FilteredRelation, OuterRef, Q, QuerySet, Subquery

from learn.completion import COMPLETED, IN_PROGRESS, NOT_STARTED
from learn.errors import NotEnrolled
from learn.models import Activity, Course, CourseCompletion, Enrollment
from lms.compiled import Compiled
from lms.tenancy import get_or_404, ids_or_404
from lms.wire import wire_columns
from organizations.models import Membership, Organization


def _enrolled(org: Organization, membership: Membership, course_ref) -> Exists:
    """Whether the member is enrolled in ``course_ref`` (an id, or an ``OuterRef``)."""
    return Exists(Enrollment.objects.for_org(org).filter(membership=membership, course=course_ref))


def stored_completion(
    org: Organization, membership: Membership, course_ref
) -> QuerySet[CourseCompletion]:
    """The member's stored completion of ``course_ref`` (an id, or an ``OuterRef``)."""
    return CourseCompletion.objects.for_org(org).filter(membership=membership, course=course_ref)


def published_activities(org: Organization) -> QuerySet[Activity]:
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
            enrolled=_enrolled(org_id, membership_id, OuterRef("course_id")),
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


def _published_courses(org: Organization, membership: Membership) -> QuerySet[Course]:
    """The organization's published courses, each with ``enrolled``: whether the member is."""
    return (
        Course.objects.for_org(org)
        .filter(published=True)
        .annotate(enrolled=_enrolled(org, membership, OuterRef("pk")))
    )


def enrolled_course(
    *, org: Organization, membership: Membership, course_id: uuid.UUID, **annotations
) -> Course:
    """The published course the member is enrolled in, with ``annotations``, in one query.
    Unknown, foreign or unpublished: NotFound; not enrolled: NotEnrolled."""
    course = get_or_404(
        _published_courses(org, membership).annotate(**annotations).only("id"), id=course_id
    )
    if not course.enrolled:
        raise NotEnrolled()
    return course


def listed_activities(org: Organization, course_id: uuid.UUID) -> QuerySet[Activity]:
    """A published course's activities as 4.4 lists them: published, of published modules,
    by module seq then seq."""
    return (
        Activity.objects.for_org(org)
        .filter(course_id=course_id, published=True, module__published=True)
        .order_by("module__seq", "seq", "id")
    )


# What an activity's wire shape reads, by attribute name (ActivitySerializer's sources); the
# listing reads the ids and timestamps as wire text (lms.wire).
ACTIVITY_COLUMNS = (
    "org_id",
    "id",
    "module_id",
    "course_id",
    "seq",
    "settings",
    "created_at",
    "updated_at",
)
# The listing's reads, their SQL compiled once per process (lms.compiled). The activities
# come with ``enrolled`` (an uncorrelated EXISTS the database evaluates once) and only when
# the course is published, so a course with a listed activity answers in one query; the
# access check is read on its own only when no activity is listed.
_COURSE_ACCESS = Compiled(
    lambda org_id, membership_id, course_id: (
        _published_courses(org_id, membership_id).filter(id=course_id).values_list("id", "enrolled")
    ),
    prepare=True,
)
_LISTED = Compiled(
    lambda org_id, membership_id, course_id: (
        listed_activities(org_id, course_id)
        .filter(course__published=True)
        .annotate(enrolled=_enrolled(org_id, membership_id, course_id))
        .values_list(*wire_columns(Activity, ACTIVITY_COLUMNS), "enrolled")
    ),
    prepare=True,
)


def list_published_activities(
    *, org: Organization, membership: Membership, course_id: object
) -> list[dict]:
    """The course's published activities of published modules, by module seq then seq, as
    ``{attribute: value}``. The same checks as ``enrolled_course``: course unknown, foreign,
    unpublished or a malformed id: NotFound; caller not enrolled: NotEnrolled. One query
    when the course lists an activity, two when it lists none, whatever the number.
    """
    values = ids_or_404(Course, {"course_id": course_id})
    rows = _LISTED.rows(org_id=org.id, membership_id=membership.id, **values)
    if not rows:
        _, enrolled = _COURSE_ACCESS.one_or_404(
            Course, org_id=org.id, membership_id=membership.id, **values
        )
    else:
        enrolled = rows[0][-1]
    if not enrolled:
        raise NotEnrolled()
    return [dict(zip(ACTIVITY_COLUMNS, row[:-1], strict=True)) for row in rows]


@dataclass(frozen=True)
class ActivityProgress:
    activity_id: uuid.UUID
    status: str
    progress: float


@dataclass(frozen=True)
class CourseProgress:
    course_id: uuid.UUID
    status: str
    progress: float
    completed_at: datetime | None
    activities: list[ActivityProgress]


def course_progress(
    *, org: Organization, membership: Membership, course_id: uuid.UUID
) -> CourseProgress:
    """The member's progress on a course and on each activity it lists, in listing order.

    An activity's status and progress are what the last progress report answered
    (not-started, 0 without one). The course is completed once its completion is stored (it
    latches); ``progress`` is the fraction of listed activities completed now. Two queries
    whatever the number of activities; access as for the listing.
    """
    completion = stored_completion(org, membership, OuterRef("pk"))
    course = enrolled_course(
        org=org,
        membership=membership,
        course_id=course_id,
        completed_at=Subquery(completion.values("completed_at")[:1]),
    )
    rows = (
        listed_activities(org, course.id)
        .annotate(
            mine=FilteredRelation(
                "progress", condition=Q(progress__org=org, progress__membership=membership)
            )
        )
        .values_list("id", "mine__status", "mine__progress")
    )
    activities = [
        ActivityProgress(activity_id, status or NOT_STARTED, progress or 0.0)
        for activity_id, status, progress in rows
    ]
    done = sum(activity.status == COMPLETED for activity in activities)
    if course.completed_at is not None:
        status = COMPLETED
    elif any(activity.status != NOT_STARTED for activity in activities):
        status = IN_PROGRESS
    else:
        status = NOT_STARTED
    return CourseProgress(
        course_id=course.id,
        status=status,
        progress=_fraction(done, len(activities)),
        completed_at=course.completed_at,
        activities=activities,
    )


def _fraction(done: int, total: int) -> float:
    """done / total to three decimals, 1.0 only when all are done (as 4.3 rounds)."""
    if not total:
        return 0.0
    return 1.0 if done == total else min(round(done / total, 3), 0.999)
