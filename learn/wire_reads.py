"""Reads that answer the wire's text: the activity listing (4.4), a course's outline (8.2),
the caller's courses (8.1) and the completions feed (9.6).

Each is a compiled read (``lms.db.compiled``) whose ids and times the database writes as the
text the API answers (``lms.db.wire``), so no value is parsed into a Python object to be
written back. A read answers rows for a ``lms.web.shapes.Shape`` of its serializer (the
listing: rows read through ``ACTIVITY.columns``; the outline and the courses: their shapes'
records, composed by name, the course's columns read by ``COURSE_HEAD``'s sources), which
the view turns into the body. Access
and standing are decided as ``learn.selectors`` decides them, with its helpers; the reads
that answer domain values (a course's progress, the activity a report is on) are there.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from django.core.exceptions import ValidationError
from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    FilteredRelation,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Lower
from django.utils import timezone

from learn import standing
from learn.completion import COMPLETED, IN_PROGRESS, NOT_STARTED
from learn.errors import NotEnrolled
from learn.models import ActivityFunnel, Course, CourseCompletion, Enrollment, Module, Stage
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
from learn.serializers import (
    ACTIVITY,
    COURSE_HEAD,
    COURSE_OUTLINE,
    ENROLLED_COURSE,
    OUTLINE_ACTIVITY,
    OUTLINE_MODULE,
)
from lms.db.collation import CodePointOrder
from lms.db.compiled import Compiled
from lms.db.wire import WireId, WireTime, wire_columns
from lms.pagination import Page, feed_cursor, page_rows
from lms.sorting import SortKey
from lms.tenancy import ids_or_404, not_found
from organizations.api import Membership, Organization

# --- a course's activities (4.4) --------------------------------------------------------------

# The listing's reads, their SQL compiled once per process (lms.db.compiled). The activities
# come with ``enrolled`` (an uncorrelated EXISTS the database evaluates once) and only when
# the course is published, so a course with a listed activity answers in one query; the
# access check is read on its own only when no activity is listed.
_COURSE_ACCESS = Compiled(
    lambda org_id, membership_id, course_id: (
        published_courses(org_id, membership_id).filter(id=course_id).values_list("id", "enrolled")  # type: ignore[misc]
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


# The outline and the caller's courses are composed by name as the records of their shapes
# (``learn.serializers``: the serializers declare them once), named tuples made when the
# module loads, so ones the type checker cannot see: to it, any value. Both start with the
# course's own columns (``COURSE_HEAD``), which their reads select by those names.
if TYPE_CHECKING:
    CourseOutline = Any
    OutlineModule = Any
    OutlineActivity = Any
    EnrolledCourse = Any
else:
    CourseOutline = COURSE_OUTLINE.record
    OutlineModule = OUTLINE_MODULE.record
    OutlineActivity = OUTLINE_ACTIVITY.record
    EnrolledCourse = ENROLLED_COURSE.record
_COURSE = COURSE_HEAD.sources
if {COURSE_OUTLINE.sources[: len(_COURSE)], ENROLLED_COURSE.sources[: len(_COURSE)]} != {_COURSE}:
    raise AssertionError("The outline and the caller's courses start with COURSE_HEAD's fields.")


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
        .values_list(*wire_columns(Course, _COURSE), "enrolled", "completed_at")
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
            *wire_columns(Course, _COURSE, through="course"),
            "enrolled",
            "completed_at",
        )
    )


# Where the course's head starts in each row of ``_OUTLINE``: its columns, enrolled and
# completed_at.
_HEAD = -(len(_COURSE) + 2)


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
    head = rows[0][_HEAD:] if rows else _OUTLINE_HEAD.one_or_404(Course, **lookup)
    *course, enrolled, completed_at = head
    if not (enrolled or preview):
        raise NotEnrolled()
    modules: list[OutlineModule] = []
    done = listed = 0
    started = False
    for module_id, module_seq, module_title, activity_id, seq, title, settings, *mine in rows:
        if not modules or modules[-1].id != module_id:
            modules.append(
                OutlineModule(id=module_id, seq=module_seq, title=module_title, activities=[])
            )
        if activity_id is None:  # a module without a published activity
            continue
        reported, progress, state = mine[:3]
        status, progress, remaining = activity_standing(settings, reported, progress, state)
        modules[-1].activities.append(
            OutlineActivity(
                id=activity_id,
                seq=seq,
                title=title,
                settings=settings,
                status=status,
                progress=progress,
                remaining=remaining,
            )
        )
        listed += 1
        done += status == COMPLETED
        started = started or reported is not None
    return CourseOutline(
        **dict(zip(_COURSE, course, strict=True)),
        status=course_status(completed_at, started),
        progress=fraction_done(done, listed),
        completed_at=completed_at,
        modules=modules,
    )


# --- the caller's courses (8.1) ---------------------------------------------------------------


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
            *wire_columns(Course, _COURSE, through="course"),
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


_WIDTH = len(_COURSE)


def _enrolled_course(row: tuple) -> EnrolledCourse:
    """A row of ``enrolled_courses`` as the caller's courses answer it: the course's columns
    first, in ``COURSE_HEAD``'s order, as the record's are."""
    enrolled_at, completed_at, count, done, started = row[_WIDTH:]
    return EnrolledCourse(
        *row[:_WIDTH],
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


# --- a course's roster (9.4) ------------------------------------------------------------------

# Wire sort field -> the enrolment's column, and whether it may be null (nulls sort last in
# both directions). The indexes: learn.models._roster_index and migration 0009.
ROSTER_SORTS = {
    "enrolledAt": ("created_at", False),
    "completedAt": ("completed_at", True),
    "progress": ("done", False),  # done / listed: the same order, the same index
    "email": ("email_key", False),
    "dueAt": ("due_at", True),
    "lastActivityAt": ("last_activity_at", True),
}
_STAGES = {
    NOT_STARTED: Stage.NOT_STARTED,
    IN_PROGRESS: Stage.IN_PROGRESS,
    COMPLETED: Stage.COMPLETED,
}
_STATUSES = {stage: status for status, stage in _STAGES.items()}


@dataclass(frozen=True)
class RosterFilters:
    """The roster's filters: ``status`` (a wire status) and ``overdue`` when given, and
    ``search`` ("" for none)."""

    status: str | None = None
    overdue: bool | None = None
    search: str = ""


@dataclass(frozen=True, slots=True)
class RosterRow:
    membership_id: str
    email: str
    first_name: str
    last_name: str
    enrolled_at: str
    due_at: str | None
    status: str
    progress: float
    completed_at: str | None
    last_activity_at: str | None
    overdue: bool


def _sort_key(key: SortKey):
    column, nullable = ROSTER_SORTS[key.field]
    expression = CodePointOrder(F(column)) if column == "email_key" else F(column)
    if not nullable:
        return expression.desc() if key.descending else expression.asc()
    return expression.desc(nulls_last=True) if key.descending else expression.asc(nulls_last=True)


def _roster_order(sort: Sequence[SortKey]) -> list:
    """``ORDER BY`` of the sort keys, then the member id in the direction of the last key
    (each single-key sort is then one index, read forwards or backwards)."""
    tie = F("membership_id").desc() if sort[-1].descending else F("membership_id").asc()
    return [*(_sort_key(key) for key in sort), tie]


def _overdue(now: datetime) -> Q:
    return Q(due_at__lt=now, stage__lt=Stage.COMPLETED)


def roster_base(org_id, course_id, filters: RosterFilters, now: datetime) -> QuerySet:
    """The course's enrolments the filters select, unordered: what a roster page reads and
    its total counts."""
    rows = Enrollment.objects.for_org(org_id).filter(course_id=course_id)
    if filters.status is not None:
        rows = rows.filter(stage=_STAGES[filters.status])
    if filters.overdue is not None:
        rows = rows.filter(_overdue(now)) if filters.overdue else rows.exclude(_overdue(now))
    if filters.search:
        if standing.SEPARATOR in filters.search:  # no e-mail or name holds it
            return rows.none()
        rows = rows.filter(search_text__contains=Lower(Value(filters.search)))
    return rows


def _listed_count(org_id, course_id) -> Coalesce:
    """How many activities the course lists, as an uncorrelated scalar subquery (read once
    for the whole page)."""
    counted = (
        listed_activities(org_id, course_id)
        .order_by()
        .values("course_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(counted[:1]), 0)


_ROSTER_COLUMNS = (
    WireId("membership_id"),
    "membership__user__email",
    "membership__user__first_name",
    "membership__user__last_name",
    WireTime("created_at"),
    WireTime("due_at"),
    "stage",
    "done",
    WireTime("completed_at"),
    WireTime("last_activity_at"),
    "overdue",
    "listed",
)


def _roster_ordered(org_id, course_id, filters, sort, now: datetime) -> QuerySet:
    return (
        roster_base(org_id, course_id, filters, now)
        .annotate(
            overdue=Case(When(_overdue(now), then=Value(True)), default=Value(False)),
            listed=_listed_count(org_id, course_id),
        )
        .order_by(*_roster_order(sort))
    )


def roster(org_id, course_id, filters: RosterFilters, sort: Sequence[SortKey], now: datetime):
    """The course's roster as ``values_list`` rows for ``roster_row``, the filters applied,
    totally ordered by ``sort`` then the member id (ids and times as wire text). Page it
    with ``lms.pagination.page_rows``."""
    return _roster_ordered(org_id, course_id, filters, sort, now).values_list(*_ROSTER_COLUMNS)


def roster_row(row: tuple) -> RosterRow:
    """A row of ``roster`` as the roster answers it (``ROSTER_ROW``)."""
    member, email, first_name, last_name, enrolled_at, due_at = row[:6]
    stage, done, completed_at, last_activity_at, overdue, listed = row[6:]
    return RosterRow(
        member,
        email,
        first_name,
        last_name,
        enrolled_at,
        due_at,
        status=_STATUSES[stage],
        progress=fraction_done(done, listed),
        completed_at=completed_at,
        last_activity_at=last_activity_at,
        overdue=overdue,
    )


def roster_page(
    org_id, course_id, filters: RosterFilters, sort: Sequence[SortKey], page: Page
) -> tuple[list[RosterRow], int]:
    """A page of the course's roster (``roster``) and the total the filters select, in at
    most three queries: the page's enrolment ids and the total (``lms.pagination.page_rows``
    over the enrolments alone, so the rows a deep page skips are read from the sort's index
    without joining their learners), then those rows whole. The course is the caller's to
    check."""
    now = timezone.now()
    base = roster_base(org_id, course_id, filters, now)
    ids, total = page_rows(
        base.order_by(*_roster_order(sort)).values_list("pk", flat=True), page, base.count
    )
    if not ids:
        return [], total
    rows = roster(org_id, course_id, filters, sort, now).filter(pk__in=ids)
    return [roster_row(row) for row in rows], total


# --- a course's report (9.5) ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FunnelStep:
    id: str
    module_id: str
    seq: int
    title: str
    started: int
    completed: int


@dataclass(frozen=True, slots=True)
class CourseReport:
    course_id: str
    title: str
    enrolled: int
    not_started: int
    in_progress: int
    completed: int
    overdue: int
    completion_rate: float
    activities: list[FunnelStep]


def _funnel_count(org_id, counter: str) -> Coalesce:
    funnel = ActivityFunnel.objects.for_org(org_id).filter(activity_id=OuterRef("id"))
    return Coalesce(Subquery(funnel.values(counter)[:1]), 0)


def course_report(org_id, course_id) -> CourseReport:
    """The course's report (``COURSE_REPORT``): its learners enrolled now counted by status
    and overdue (one aggregate over the roster's status index), the completion rate, and
    the funnel of each activity it lists, in 4.4's order (``ActivityFunnel``, kept by
    ``learn.standing``). Unknown or foreign course: NotFound. Three queries, whatever the
    numbers."""
    course_id_text, title = (
        Course.objects.for_org(org_id)
        .values_list(WireId("id"), "title")
        .filter(id=course_id)
        .first()
        or _missing_course()
    )
    now = timezone.now()
    counts = (
        Enrollment.objects.for_org(org_id)
        .filter(course_id=course_id)
        .aggregate(
            enrolled=Count("id"),
            not_started=Count("id", filter=Q(stage=Stage.NOT_STARTED)),
            in_progress=Count("id", filter=Q(stage=Stage.IN_PROGRESS)),
            completed=Count("id", filter=Q(stage=Stage.COMPLETED)),
            overdue=Count("id", filter=_overdue(now)),
        )
    )
    steps = listed_activities(org_id, course_id).values_list(
        WireId("id"),
        WireId("module_id"),
        "seq",
        "title",
        _funnel_count(org_id, "started"),
        _funnel_count(org_id, "completed"),
    )
    enrolled = counts["enrolled"]
    return CourseReport(
        course_id=course_id_text,
        title=title,
        **counts,
        completion_rate=counts["completed"] / enrolled if enrolled else 0.0,
        activities=[FunnelStep(*step) for step in steps],
    )


def _missing_course():
    raise not_found(Course)


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
