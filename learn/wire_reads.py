"""Reads that answer the wire's text: the activity listing (4.4), a course's outline (8.2),
the caller's courses (8.1) and the completions feed (9.6).

Each is a compiled read (``lms.db.compiled``) whose ids and times the database writes as the
text the API answers (``lms.db.wire``), so no value is parsed into a Python object to be
written back. A read answers rows for a ``lms.web.shapes.Shape`` of its serializer (the
listing: rows read through ``ACTIVITY.columns``; the outline and the courses: dataclasses
whose attributes are their serializers' sources), which the view turns into the body. Access
and standing are decided as ``learn.selectors`` decides them, with its helpers; the reads
that answer domain values (a course's progress, the activity a report is on) are there.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import NamedTuple

from django.core.exceptions import ValidationError
from django.db.models import Exists, FilteredRelation, OuterRef, Q, QuerySet, Subquery

from learn import completion
from learn.completion import COMPLETED
from learn.errors import NotEnrolled
from learn.models import Course, CourseCompletion, Enrollment, Module
from learn.selectors import (
    activity_standing,
    counted,
    course_status,
    fraction_done,
    is_enrolled,
    listed_activities,
    published_courses,
    stored_completion,
)
from learn.serializers import ACTIVITY
from lms.db.compiled import Compiled
from lms.db.wire import WireId, WireTime
from lms.pagination import Page, feed_cursor, page_rows
from lms.tenancy import ids_or_404
from organizations.api import Membership, Organization

# --- a course's activities (4.4) --------------------------------------------------------------

# The listing's reads, their SQL compiled once per process (lms.db.compiled). The activities
# come with ``enrolled`` (an uncorrelated EXISTS the database evaluates once) and only when
# the course is published, so a course with a listed activity answers in one query; the
# access check is read on its own only when no activity is listed.
_COURSE_ACCESS = Compiled(
    lambda org_id, membership_id, course_id: (
        published_courses(org_id, membership_id).filter(id=course_id).values_list("id", "enrolled")
    ),
    prepare=True,
)
_LISTED = Compiled(
    lambda org_id, membership_id, course_id: (
        listed_activities(org_id, course_id)
        .filter(course__published=True)
        .annotate(enrolled=is_enrolled(org_id, membership_id, course_id))
        .values_list(*ACTIVITY.columns, "enrolled")
    ),
    prepare=True,
)


def list_published_activities(
    *, org: Organization, membership: Membership, course_id: object
) -> list[tuple]:
    """The course's published activities of published modules, by module seq then seq, as
    rows read through ``ACTIVITY.columns`` (each followed by the caller's access, which
    ``ACTIVITY.body`` does not read). The same checks as ``learn.selectors.enrolled_course``:
    course unknown, foreign, unpublished or a malformed id: NotFound; caller not enrolled:
    NotEnrolled. One query when the course lists an activity, two when it lists none,
    whatever the number.
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
    return rows


# --- a course's outline (8.2) -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OutlineActivity:
    id: str
    seq: int
    title: str
    settings: object
    status: str
    progress: float
    remaining: completion.Remaining


@dataclass(frozen=True, slots=True)
class OutlineModule:
    id: str
    seq: int
    title: str
    activities: list[OutlineActivity]


@dataclass(frozen=True, slots=True)
class CourseOutline:
    id: str
    org_id: str
    title: str
    status: str
    progress: float
    completed_at: str | None
    modules: list[OutlineModule]


def _completed_at(org_id, membership_id, course_ref) -> WireTime:
    """When the member completed ``course_ref`` (an id or an ``OuterRef``), as wire text, or
    null."""
    stored = stored_completion(org_id, membership_id, course_ref)
    return WireTime(Subquery(stored.values("completed_at")[:1]))


# The course with the caller's access and completion, as the outline's head reads it.
_OUTLINE_HEAD = Compiled(
    lambda org_id, membership_id, course_id: (
        published_courses(org_id, membership_id)
        .filter(id=course_id)
        .annotate(completed_at=_completed_at(org_id, membership_id, course_id))
        .values_list(WireId("id"), WireId("org_id"), "title", "enrolled", "completed_at")
    ),
    prepare=True,
)


def _outline_rows(org_id, membership_id, course_id) -> QuerySet:
    """The course's published modules by seq, each joined to its published activities by
    seq (a module without one: a row of nulls) and each activity to the caller's progress;
    every row also carries the course's head (uncorrelated subqueries, evaluated once), so
    a course with a published module is read in one query."""
    modules = Module.objects.for_org(org_id).filter(
        course_id=course_id, published=True, course__published=True
    )
    return (
        modules.annotate(
            listed=FilteredRelation(
                "activities",
                condition=Q(
                    activities__org=org_id,
                    activities__course_id=course_id,
                    activities__published=True,
                ),
            ),
            mine=FilteredRelation(
                "listed__progress",
                condition=Q(
                    listed__progress__org=org_id, listed__progress__membership_id=membership_id
                ),
            ),
            enrolled=is_enrolled(org_id, membership_id, course_id),
            completed_at=_completed_at(org_id, membership_id, course_id),
        )
        .order_by("seq", "id", "listed__seq", "listed__id")
        .values_list(
            WireId("id"),
            "seq",
            "title",
            WireId("listed__id"),
            "listed__seq",
            "listed__title",
            "listed__settings",
            "mine__status",
            "mine__progress",
            "mine__state",
            WireId("course_id"),
            WireId("org_id"),
            "course__title",
            "enrolled",
            "completed_at",
        )
    )


_OUTLINE = Compiled(_outline_rows, prepare=True)


def course_outline(
    *, org: Organization, membership: Membership, course_id: object
) -> CourseOutline:
    """The course's published modules by seq, each with its published activities by seq
    (exactly the activities ``list_published_activities`` lists), each with the member's
    status, progress and remaining; the course's status, progress and completion as
    ``learn.selectors.course_progress`` answers them; ids and times as wire text, for
    ``COURSE_OUTLINE`` (``learn.serializers``). Access as for the listing: course unknown,
    foreign, unpublished or a malformed id: NotFound; not enrolled: NotEnrolled. One query
    when the course has a published module, two when it has none, whatever the numbers."""
    return _outline(org.id, membership.id, course_id, preview=False)


# A membership id no row has: the outline a member without any progress reads.
_NOBODY = uuid.UUID(int=0)


def course_preview(*, org: Organization, course_id: object) -> CourseOutline:
    """A published course's outline as an enrolled member who has reported nothing reads it
    (``course_outline``'s answer for them), with nobody enrolled: staff preview a course
    without enrolling themselves, which would fire its automations. NotFound as there."""
    return _outline(org.id, _NOBODY, course_id, preview=True)


def _outline(org_id, membership_id, course_id, *, preview: bool) -> CourseOutline:
    values = ids_or_404(Course, {"course_id": course_id})
    lookup = {"org_id": org_id, "membership_id": membership_id, **values}
    rows = _OUTLINE.rows(**lookup)
    head = rows[0][-5:] if rows else _OUTLINE_HEAD.one_or_404(Course, **lookup)
    course_id_text, org_id, course_title, enrolled, completed_at = head
    if not (enrolled or preview):
        raise NotEnrolled()
    modules: list[OutlineModule] = []
    done = listed = 0
    started = False
    for module_id, module_seq, module_title, activity_id, seq, title, settings, *mine in rows:
        if not modules or modules[-1].id != module_id:
            modules.append(OutlineModule(module_id, module_seq, module_title, []))
        if activity_id is None:  # a module without a published activity
            continue
        reported, progress, state = mine[:3]
        status, progress, remaining = activity_standing(settings, reported, progress, state)
        modules[-1].activities.append(
            OutlineActivity(activity_id, seq, title, settings, status, progress, remaining)
        )
        listed += 1
        done += status == COMPLETED
        started = started or reported is not None
    return CourseOutline(
        id=course_id_text,
        org_id=org_id,
        title=course_title,
        status=course_status(completed_at, started),
        progress=fraction_done(done, listed),
        completed_at=completed_at,
        modules=modules,
    )


# --- the caller's courses (8.1) ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EnrolledCourse:
    id: str
    org_id: str
    title: str
    enrolled_at: str
    status: str
    progress: float
    completed_at: str | None
    activity_count: int


def _enrollments(org_id, membership_id) -> QuerySet:
    """The member's enrollments in published courses: the rows the list pages and counts."""
    return Enrollment.objects.for_org(org_id).filter(
        membership_id=membership_id, course__published=True
    )


def enrolled_courses(org_id, membership_id) -> QuerySet:
    """The member's enrollments in published courses, most recent first (the course id,
    descending, breaks a tie), each with its course's head and the member's counts on it
    (correlated subqueries, evaluated for the rows of the page only)."""
    listed = listed_activities(org_id, OuterRef("course_id"))  # counted: unordered
    # One filter() call: each call on a multi-valued relation would join it again.
    mine = {"progress__org": org_id, "progress__membership_id": membership_id}
    return (
        _enrollments(org_id, membership_id)
        .order_by("-created_at", "-course_id")
        .values_list(
            WireId("course_id"),
            WireId("org_id"),
            "course__title",
            WireTime("created_at"),
            _completed_at(org_id, membership_id, OuterRef("course_id")),
            counted(listed),
            counted(listed.filter(**mine, progress__status=COMPLETED)),
            Exists(listed.filter(**mine)),
        )
    )


# Page 1 (the page nearly every request asks for), compiled once per page size and prepared:
# its plan does not depend on the values (a member's few enrollments by the index that
# starts with them, then subqueries by course id), and planning its four subqueries cost
# more than running them (bench/load.py's "courses", docs/performance.md).
_FIRST_PAGE = Compiled(
    lambda size, org_id, membership_id: enrolled_courses(org_id, membership_id)[:size],
    prepare=True,
)


def _enrolled_course(row: tuple) -> EnrolledCourse:
    course_id, org_id, title, enrolled_at, completed_at, count, done, started = row
    return EnrolledCourse(
        id=course_id,
        org_id=org_id,
        title=title,
        enrolled_at=enrolled_at,
        status=course_status(completed_at, started),
        progress=fraction_done(done, count),
        completed_at=completed_at,
        activity_count=count,
    )


def my_courses(
    *, org: Organization, membership: Membership, page: Page
) -> tuple[list[EnrolledCourse], int]:
    """The page of the published courses the member is enrolled in, most recently enrolled
    first, and their total; each with its title, the enrollment's time, the member's
    status, progress and completion as ``learn.selectors.course_progress`` answers them,
    and how many activities it lists; ids and times as wire text, for ``ENROLLED_COURSE``
    (``learn.serializers``). Page 1 in one query when it is not full, two when it is; any
    other page in at most two (``lms.pagination.page_rows``)."""
    lookup = {"org_id": org.id, "membership_id": membership.id}

    def count() -> int:  # built only when needed: a queryset costs as much as the read
        return _enrollments(org.id, membership.id).count()

    if page.offset == 0:
        rows = _FIRST_PAGE.rows(page.size, **lookup)
        total = len(rows) if len(rows) < page.size else count()
    else:
        rows, total = page_rows(enrolled_courses(**lookup), page, count)
    return [_enrolled_course(row) for row in rows], total


# --- the completions feed (9.6) ---------------------------------------------------------------


class Completion(NamedTuple):
    id: str
    course_id: str
    membership_id: str
    email: str
    completed_at: str
    position: int


@dataclass(frozen=True, slots=True)
class Completions:
    rows: list[Completion]
    next: str


def completions_feed(
    *, org: Organization, after: int | None, cursor: str | None, limit: int, course_id=None
) -> Completions:
    """The organization's course completions after feed position ``after`` (the position
    the cursor ``cursor`` continues after; None: from the first), at most ``limit``, in
    position order, only ``course_id``'s when given; ids and times as wire text, for
    ``COMPLETIONS`` (``learn.serializers``). ``next`` continues after the last row, or is
    ``cursor`` itself when there is none (a first read of none: the start's cursor).

    Positions become visible in their order (``learn.course_completion``), so everything
    before a position served is visible already: reading after it skips nothing. A
    ``course_id`` that is no course of the organization: ValidationError naming
    ``course_id``. One query, two when a course is named and nothing is new."""
    completions = CourseCompletion.objects.for_org(org).filter(position__gt=after or 0)
    if course_id is not None:
        completions = completions.filter(course_id=course_id)
    rows = [
        Completion(*row)
        for row in completions.order_by("position").values_list(
            WireId("id"),
            WireId("course_id"),
            WireId("membership_id"),
            "membership__user__email",
            WireTime("completed_at"),
            "position",
        )[:limit]
    ]
    named = course_id is not None
    if not rows and named and not Course.objects.for_org(org).filter(id=course_id).exists():
        raise ValidationError({"course_id": ["No course of your organization has this id."]})
    if rows:
        following = feed_cursor(rows[-1].position)
    else:
        following = cursor if cursor is not None else feed_cursor(0)
    return Completions(rows=rows, next=following)
