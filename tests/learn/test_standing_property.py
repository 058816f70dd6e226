"""The roster and the report never disagree with what each learner is told (7.4), whatever
the order of reports, enrolments, unenrolments, re-enrolments and publication changes: a
property test on the real database (PostgreSQL and SQLite), which compares after every step
each enrolled learner's roster row with their course progress, and the report's counts and
funnel with counts made naively from the stored rows."""

from __future__ import annotations

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from learn import completion
from learn.errors import NotEnrolled
from learn.models import Activity, CourseCompletion, Enrollment, Progress
from learn.selectors import course_progress, course_status, fraction_done
from learn.services import enroll_members, record_progress, unenroll
from learn.wire_reads import RosterFilters, course_report, roster_page
from lms.pagination import Page
from lms.serializers import wire_time
from lms.sorting import SortKey
from tests.helpers import make_member
from tests.learn.factories import ActivityFactory, CourseFactory, ModuleFactory

pytestmark = pytest.mark.django_db

LEARNERS, ACTIVITIES = 3, 4
RULES = [
    None,  # view: completed by any report
    {"type": "time", "minSeconds": 2},
    {"type": "time", "minSeconds": 1},
    {"type": "score", "passingScore": 0.5},
]
REPORTS = [
    {"type": "time", "seconds": 1},
    {"type": "score", "score": 8, "maxScore": 10},
    {"type": "score", "score": 1, "maxScore": 10},
]

_report = st.tuples(
    st.just("report"),
    st.integers(0, LEARNERS - 1),
    st.integers(0, ACTIVITIES - 1),
    st.integers(0, len(REPORTS) - 1),
)
_enrol = st.tuples(st.just("enrol"), st.integers(0, LEARNERS - 1))
# Reports and enrolments drawn more often than the rest, so that most plans reach progress.
steps = st.lists(
    st.one_of(
        _report,
        _report,
        _report,
        _enrol,
        _enrol,
        st.tuples(st.just("unenrol"), st.integers(0, LEARNERS - 1)),
        st.tuples(st.just("activity"), st.integers(0, ACTIVITIES - 1)),
        st.tuples(st.just("move"), st.integers(0, ACTIVITIES - 1)),
        st.tuples(st.just("module"), st.integers(0, 1)),
        st.tuples(st.just("course")),
    ),
    min_size=1,
    max_size=16,
)


class Rollback(Exception):
    """Ends an example's savepoint, so that each example starts from nothing."""


def told(org, membership, course) -> tuple[str, float, str | None, str | None]:
    """What 7.4 answers the learner (as if the course were published), and their last
    activity, counted naively from the stored rows."""
    listed = list(
        Activity.objects.for_org(org).filter(course=course, published=True, module__published=True)
    )
    mine = {
        row.activity_id: row
        for row in Progress.objects.for_org(org).filter(
            membership=membership, activity__course=course
        )
    }
    done = sum(a.id in mine and mine[a.id].status == completion.COMPLETED for a in listed)
    started = any(a.id in mine for a in listed)
    stored = CourseCompletion.objects.for_org(org).filter(membership=membership, course=course)
    completed_at = stored.values_list("completed_at", flat=True).first()
    last = max((row.updated_at for row in mine.values()), default=None)
    return (
        course_status(completed_at, started),
        fraction_done(done, len(listed)),
        completed_at and wire_time(completed_at),
        last and wire_time(last),
    )


def check(org, course, members) -> None:
    enrolled = {
        row.membership_id
        for row in Enrollment.objects.for_org(org).filter(course=course).only("membership_id")
    }
    sort = [SortKey("email", False)]
    rows, total = roster_page(org.id, course.id, RosterFilters(), sort, Page(1, 100))
    assert total == len(enrolled) == len(rows)
    by_member = {row.membership_id: row for row in rows}
    assert set(by_member) == {str(member) for member in enrolled}
    statuses = {}
    for member in members:
        if member.membership.id not in enrolled:
            continue
        row = by_member[str(member.membership.id)]
        status, progress, completed_at, last = told(org, member.membership, course)
        assert (row.status, row.progress, row.completed_at) == (status, progress, completed_at)
        assert row.last_activity_at == last
        statuses[status] = statuses.get(status, 0) + 1
        if course.published:  # the real 7.4 read agrees with the naive one
            answered = course_progress(org=org, membership=member.membership, course_id=course.id)
            assert (answered.status, answered.progress) == (status, progress)
    for status in (completion.NOT_STARTED, completion.IN_PROGRESS, completion.COMPLETED):
        _, filtered = roster_page(
            org.id, course.id, RosterFilters(status=status), sort, Page(1, 100)
        )
        assert filtered == statuses.get(status, 0)
    report = course_report(org.id, course.id)
    assert report.enrolled == len(enrolled)
    assert report.not_started == statuses.get(completion.NOT_STARTED, 0)
    assert report.in_progress == statuses.get(completion.IN_PROGRESS, 0)
    assert report.completed == statuses.get(completion.COMPLETED, 0)
    listed = (
        Activity.objects.for_org(org)
        .filter(course=course, published=True, module__published=True)
        .order_by("module__seq", "seq", "id")
    )
    assert [step.id for step in report.activities] == [str(a.id) for a in listed]
    for step, activity in zip(report.activities, listed, strict=True):
        theirs = Progress.objects.for_org(org).filter(activity=activity, membership__in=enrolled)
        assert step.started == theirs.count()
        assert step.completed == theirs.filter(status=completion.COMPLETED).count()


def play(org, course, modules, activities, members, plan) -> None:
    for step in plan:
        kind, *args = step
        if kind == "report":
            learner, index, report = args
            try:
                with transaction.atomic():
                    record_progress(
                        org=org,
                        membership=members[learner].membership,
                        activity_id=activities[index].id,
                        reports=completion.read_reports([REPORTS[report]]),
                        request_id="property",
                    )
            except (NotEnrolled, Exception) as refused:  # 404 or 403 as 4.3 answers
                assert type(refused).__name__ in {"NotEnrolled", "NotFound"}, refused
        elif kind == "enrol":
            enroll_members(
                org_id=org.id, course_id=course.id, membership_ids=[members[args[0]].membership.id]
            )
        elif kind == "unenrol":
            try:
                unenroll(
                    org_id=org.id, course_id=course.id, membership_id=members[args[0]].membership.id
                )
            except Exception as refused:
                assert type(refused).__name__ == "NotFound", refused
        elif kind == "activity":
            activity = activities[args[0]]
            activity.published = not activity.published
            activity.save()
        elif kind == "move":
            activity = activities[args[0]]
            activity.module = modules[1] if activity.module_id == modules[0].id else modules[0]
            activity.seq = 10 + args[0]
            activity.save()
        elif kind == "module":
            module = modules[args[0]]
            module.published = not module.published
            module.save()
        else:
            course.published = not course.published
            course.save()
        check(org, course, members)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=steps, published=st.sampled_from([True, True, False]))
def test_the_roster_and_report_always_agree_with_each_learners_progress(org, plan, published):
    try:
        with transaction.atomic():
            course = CourseFactory(org=org, published=published)
            modules = [ModuleFactory(course=course, seq=1), ModuleFactory(course=course, seq=2)]
            activities = [
                ActivityFactory(
                    module=modules[index % 2],
                    seq=index + 1,
                    settings=None if rule is None else {"completion": rule},
                )
                for index, rule in enumerate(RULES)
            ]
            members = [make_member(org) for _ in range(LEARNERS)]
            play(org, course, modules, activities, members, plan)
            raise Rollback
    except Rollback:
        pass
