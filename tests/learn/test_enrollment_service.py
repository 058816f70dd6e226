"""The one enrolment service (learn.services.enroll_members and unenroll, CONTRACT 9.3): a
constant number of queries whatever the number of members, one ``enrollment.created`` event
per new enrolment, due dates given, kept or cleared, and an unenrolment that keeps the
learner's progress for a re-enrolment."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from automations.models import AutomationRun
from learn.models import CourseCompletion, Enrollment, Progress
from learn.services import UNSET, UnknownMembers, enroll_members, unenroll
from lms.errors import NotFound
from tests.automations.factories import AutomationFactory
from tests.factories import MembershipFactory
from tests.helpers import assert_error, make_member
from tests.learn.factories import ActivityFactory, CourseFactory
from tests.learn.progress import report

pytestmark = pytest.mark.django_db

DUE = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
RACERS = 6


def members(org, count: int) -> list:
    return [MembershipFactory(org=org).id for _ in range(count)]


def enrol(course, ids, **options):
    return enroll_members(org_id=course.org_id, course_id=course.id, membership_ids=ids, **options)


def due_dates(course) -> dict:
    return dict(Enrollment.objects.for_org(course.org_id).values_list("membership_id", "due_at"))


def test_enrolling_answers_who_was_enrolled_and_who_already_was_in_the_order_given(
    org, course, recorded_events
):
    first, second, third = members(org, 3)
    assert enrol(course, [second]) == ([second], [])
    assert enrol(course, [third, second, first, third]) == ([third, first], [second])
    events = [e for e in recorded_events if e.type == "enrollment.created"]
    assert [e.data["memberId"] for e in events] == [str(second), str(third), str(first)]
    rows = dict(
        Enrollment.objects.for_org(org).values_list("membership_id", "id").filter(course=course)
    )
    expected = [str(rows[member]) for member in (second, third, first)]
    assert [e.data["enrollmentId"] for e in events] == expected
    assert {e.data["courseId"] for e in events} == {str(course.id)}


@pytest.mark.parametrize("count", [1, 500])
def test_enrolling_costs_the_same_queries_for_one_member_and_for_500(
    org, course, count, django_assert_max_num_queries, django_capture_on_commit_callbacks
):
    # Automations on enrollment.created are enabled: each new enrolment records their runs.
    for _ in range(2):
        AutomationFactory(org=org, trigger="enrollment.created")
    already = members(org, 1)
    enrol(course, already)
    ids = [*members(org, count), *already]
    # The course, the members, the insert, its read back, the due date of the one enrolled
    # already, the new enrolments' standing and their progress for the funnel (and its
    # write, when they have some), the automations and the runs' insert, in one savepoint.
    with django_capture_on_commit_callbacks() as callbacks, django_assert_max_num_queries(12):
        result = enrol(course, ids, due_at=DUE)
    assert len(result.enrolled) == count and result.already_enrolled == already
    assert AutomationRun.objects.for_org(org).count() == 2 * (count + 1)
    assert len(callbacks) == 1  # one hand-off of every run to the worker


def test_query_counts_match_exactly_for_one_and_500(org, course):
    AutomationFactory(org=org, trigger="enrollment.created")
    counts = []
    for count in (1, 500):
        ids = members(org, count)
        with CaptureQueriesContext(connection) as captured:
            enrol(course, ids)
        counts.append(len(captured))
    assert counts[0] == counts[1]


def test_a_due_date_is_set_replaced_kept_or_cleared(org, course):
    first, second = members(org, 2)
    enrol(course, [first], due_at=DUE)
    assert due_dates(course) == {first: DUE}
    enrol(course, [first, second])  # left out: kept for the one enrolled, none for the new one
    assert due_dates(course) == {first: DUE, second: None}
    later = DUE + timedelta(days=3)
    enrol(course, [first, second], due_at=later)  # given: replaces both
    assert due_dates(course) == {first: later, second: later}
    enrol(course, [second], due_at=None)  # null: clears it
    assert due_dates(course) == {first: later, second: None}
    enrol(course, [first], due_at=UNSET)
    assert due_dates(course)[first] == later


def test_an_unknown_or_foreign_member_enrols_nobody(org, other_org, course, recorded_events):
    mine, foreign = members(org, 1)[0], members(other_org, 1)[0]
    with pytest.raises(UnknownMembers) as raised:
        enrol(course, [mine, foreign])
    assert raised.value.ids == [foreign]
    assert not Enrollment.objects.for_org(org).exists()
    assert recorded_events == []


def test_a_foreign_course_is_not_found(org, other_org):
    foreign = CourseFactory(org=other_org)
    with pytest.raises(NotFound):
        enroll_members(org_id=org.id, course_id=foreign.id, membership_ids=members(org, 1))
    assert not Enrollment.all_orgs.exists()


def test_an_unpublished_course_takes_enrolments(org):
    draft = CourseFactory(org=org, published=False)
    (member,) = members(org, 1)
    assert enrol(draft, [member]).enrolled == [member]


def test_unenrolling_keeps_progress_and_a_re_enrolment_answers_as_before(
    api, org, course, recorded_events
):
    learner = make_member(org)
    first = ActivityFactory(org=org, module__course=course)
    second = ActivityFactory(org=org, module=first.module)
    enrol(course, [learner.membership.id], due_at=DUE)
    report(api, learner, first, {"type": "complete"})
    report(api, learner, second, {"type": "complete"})
    url = f"/api/learn/courses/{course.id}/progress"
    before = api.get(url, token=learner.token).json()
    assert before["status"] == "completed"
    enrolled_at = Enrollment.objects.for_org(org).get(course=course).created_at

    unenroll(org_id=org.id, course_id=course.id, membership_id=learner.membership.id)
    assert not Enrollment.objects.for_org(org).exists()
    assert Progress.objects.for_org(org).count() == 2
    assert CourseCompletion.objects.for_org(org).count() == 1
    assert_error(api.get(url, token=learner.token), 403, "not_enrolled")
    with pytest.raises(NotFound):
        unenroll(org_id=org.id, course_id=course.id, membership_id=learner.membership.id)

    assert enrol(course, [learner.membership.id]).enrolled == [learner.membership.id]
    again = Enrollment.objects.for_org(org).get(course=course)
    assert again.due_at is None and again.created_at > enrolled_at
    assert api.get(url, token=learner.token).json() == before
    created = [e for e in recorded_events if e.type == "enrollment.created"]
    assert len(created) == 2 and created[1].data["enrollmentId"] == str(again.id)


def test_unenrolling_a_member_who_is_not_enrolled_is_not_found(org, course):
    (member,) = members(org, 1)
    with pytest.raises(NotFound):
        unenroll(org_id=org.id, course_id=course.id, membership_id=member)
    enrol(CourseFactory(org=org), [member])
    with pytest.raises(NotFound):  # enrolled elsewhere only
        unenroll(org_id=org.id, course_id=course.id, membership_id=member)


def test_the_standing_hooks_hear_of_each_write_in_its_transaction(org, course, monkeypatch):
    heard = []
    monkeypatch.setattr("learn.standing.enrolled", lambda *args: heard.append(("+", *args)))
    monkeypatch.setattr("learn.standing.unenrolled", lambda *args: heard.append(("-", *args)))
    first, second = members(org, 2)
    enrol(course, [first, second])
    enrol(course, [first])  # nobody new: not told
    rows = dict(Enrollment.objects.for_org(org).values_list("membership_id", "id"))
    unenroll(org_id=org.id, course_id=course.id, membership_id=first)
    assert heard == [
        ("+", org.id, course.id, [rows[first], rows[second]]),
        ("-", org.id, course.id, [rows[first]]),
    ]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_racing_enrolments_make_each_enrolment_one_event(org, course, recorded_events):
    AutomationFactory(org=org, trigger="enrollment.created")
    ids = members(org, 40)
    barrier, results = threading.Barrier(RACERS), [None] * RACERS

    def race(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            # Each racer enrols every member, in its own order, as its own request would.
            order = ids[index:] + ids[:index]
            results[index] = enrol(course, order)
        finally:
            connection.close()

    threads = [threading.Thread(target=race, args=(i,)) for i in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    enrolled = [member for result in results for member in result.enrolled]
    assert sorted(enrolled) == sorted(ids)  # each by exactly one racer
    for result in results:
        assert sorted([*result.enrolled, *result.already_enrolled]) == sorted(ids)
    created = [e for e in recorded_events if e.type == "enrollment.created"]
    assert sorted(e.data["memberId"] for e in created) == sorted(map(str, ids))
    assert Enrollment.objects.for_org(org).count() == len(ids)
    assert AutomationRun.objects.for_org(org).count() == len(ids)
