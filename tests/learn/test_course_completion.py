"""Course completion (7.4): when a learner's last listed activity becomes completed the course
is completed for them, stored with the time, once; course.completed is emitted in the same
transaction as the report that completed it."""

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from learn.course_completion import complete_course_if_done
from learn.models import CourseCompletion, Enrollment, Progress, ProgressReport
from tests.factories import UserFactory
from tests.helpers import assert_error, make_member
from tests.learn.factories import ActivityFactory, CourseFactory, EnrollmentFactory, ModuleFactory
from tests.learn.progress import standing_statements

pytestmark = pytest.mark.django_db

URL = "/api/learn/progress"


def complete(api, member, activity):
    response = api.post(
        URL, {"activity": str(activity.id), "reports": [{"type": "complete"}]}, token=member.token
    )
    assert response.status_code == 200, response.content[:500]
    assert response.json() == {"status": "completed", "progress": 1.0, "remaining": None}
    return response


def course_events(events) -> list:
    return [e for e in events if e.type == "course.completed"]


@pytest.fixture
def two(module):
    return [ActivityFactory(module=module, seq=1), ActivityFactory(module=module, seq=2)]


def test_the_last_activity_completes_the_course_once(api, enrolled, course, two, recorded_events):
    complete(api, enrolled, two[1])
    assert not CourseCompletion.all_orgs.exists() and course_events(recorded_events) == []
    complete(api, enrolled, two[0])

    completion = CourseCompletion.all_orgs.get()
    assert (completion.org_id, completion.membership_id, completion.course_id) == (
        course.org_id,
        enrolled.membership.id,
        course.id,
    )
    [event] = course_events(recorded_events)
    assert (event.org_id, event.data) == (
        course.org_id,
        {
            "courseId": str(course.id),
            "memberId": str(enrolled.membership.id),
            "email": enrolled.user.email,
        },
    )
    assert event.occurred_at == completion.completed_at


def test_reports_after_completion_are_no_new_event(api, enrolled, two, recorded_events):
    for activity in two:
        complete(api, enrolled, activity)
    for activity in two:
        complete(api, enrolled, activity)
    assert len(course_events(recorded_events)) == 1
    assert CourseCompletion.all_orgs.count() == 1


def test_the_event_is_in_the_reporting_transaction(api, enrolled, two, failing_receiver):
    """A receiver that fails makes the completing report fail: nothing of it was kept."""
    complete(api, enrolled, two[0])
    failing_receiver("course.completed")
    body = {"activity": str(two[1].id), "reports": [{"type": "complete"}]}
    assert_error(api.post(URL, body, token=enrolled.token), 500, "internal_error")
    assert not CourseCompletion.all_orgs.exists()
    assert not Progress.all_orgs.filter(activity=two[1]).exists()
    assert not ProgressReport.all_orgs.filter(progress__activity=two[1]).exists()


def test_completion_is_per_learner(api, org, enrolled, course, two, recorded_events):
    classmate = make_member(org)
    EnrollmentFactory(course=course, membership=classmate.membership)
    complete(api, enrolled, two[0])
    complete(api, classmate, two[1])
    assert not CourseCompletion.all_orgs.exists()
    complete(api, classmate, two[0])
    assert [e.data["memberId"] for e in course_events(recorded_events)] == [
        str(classmate.membership.id)
    ]


def test_activities_of_another_course_do_not_count(api, org, enrolled, course, two):
    elsewhere = ActivityFactory(module=ModuleFactory(course=CourseFactory(org=org)))
    EnrollmentFactory(course=elsewhere.course, membership=enrolled.membership)
    complete(api, enrolled, two[0])
    complete(api, enrolled, elsewhere)  # completes the other course only
    assert list(CourseCompletion.all_orgs.values_list("course_id", flat=True)) == [
        elsewhere.course_id
    ]


def test_activities_not_listed_are_not_needed(api, enrolled, course, module, two):
    ActivityFactory(module=module, seq=3, published=False)
    ActivityFactory(module=ModuleFactory(course=course, published=False), seq=1)
    for activity in two:
        complete(api, enrolled, activity)
    assert CourseCompletion.all_orgs.filter(course=course).exists()


def test_unpublishing_the_missing_activity_completes_at_the_next_report(
    api, enrolled, course, two, recorded_events
):
    complete(api, enrolled, two[0])
    two[1].published = False
    two[1].save()
    assert not CourseCompletion.all_orgs.exists()  # staff's change alone decides nothing
    body = api.get(f"/api/learn/courses/{course.id}/progress", token=enrolled.token).json()
    assert (body["status"], body["progress"]) == ("in-progress", 1.0)
    complete(api, enrolled, two[0])  # re-reporting a completed activity of the course
    assert CourseCompletion.all_orgs.filter(course=course).count() == 1
    assert len(course_events(recorded_events)) == 1


def test_a_completion_stays_through_unenrolling_and_re_enrolling(api, enrolled, course, two):
    for activity in two:
        complete(api, enrolled, activity)
    Enrollment.all_orgs.filter(membership=enrolled.membership).delete()
    assert CourseCompletion.all_orgs.count() == 1
    EnrollmentFactory(course=course, membership=enrolled.membership)
    body = api.get(f"/api/learn/courses/{course.id}/progress", token=enrolled.token).json()
    assert body["status"] == "completed"


def test_an_in_progress_report_decides_nothing(
    api, enrolled, module, two, django_assert_num_queries
):
    timed = ActivityFactory(
        module=module, seq=3, settings={"completion": {"type": "time", "minSeconds": 60}}
    )
    for activity in two:
        complete(api, enrolled, activity)
    body = {"activity": str(timed.id), "reports": [{"type": "time", "seconds": 5}]}
    api.post(URL, body, token=enrolled.token)  # the progress row exists from here on
    # As pinned for 4.3: no course completion query when the activity is not completed.
    with django_assert_num_queries(7 + standing_statements()):
        api.post(URL, body, token=enrolled.token)


def test_a_course_listing_nothing_is_not_completed(enrolled, course, module):
    """Staff can unpublish the activity between its report and the count: a course that
    lists nothing then is not completed, by nothing."""
    ActivityFactory(module=module, seq=1, published=False)
    with transaction.atomic():
        done = complete_course_if_done(
            org=course.org, membership=enrolled.membership, course_id=course.id, now=timezone.now()
        )
    assert done is None and not CourseCompletion.all_orgs.exists()


def test_query_count_of_a_report_on_a_completed_activity(
    api, enrolled, two, django_assert_num_queries
):
    complete(api, enrolled, two[0])
    # 4.3's seven (the standing's update locks the enrollment), then the one counting query.
    with django_assert_num_queries(8 + standing_statements()):
        complete(api, enrolled, two[0])
    complete(api, enrolled, two[1])
    # The course's completion is stored: read with the activity, it latches, so the
    # count is not needed any more.
    with django_assert_num_queries(7 + standing_statements()):
        complete(api, enrolled, two[0])
    assert CourseCompletion.all_orgs.filter(membership=enrolled.membership).count() == 1


# --- the admin ----------------------------------------------------------------------------


def staff_of(org, **user) -> Client:
    member = make_member(org, "owner", user=UserFactory(is_staff=True, **user))
    client = Client()
    client.force_login(member.user)
    return client


def test_the_admin_shows_a_learners_completions_read_only(api, org, other_org, enrolled, two):
    for activity in two:
        complete(api, enrolled, activity)
    theirs = make_member(other_org)
    foreign = ActivityFactory(module=ModuleFactory(course=CourseFactory(org=other_org)))
    EnrollmentFactory(course=foreign.course, membership=theirs.membership)
    complete(api, theirs, foreign)
    completion = CourseCompletion.all_orgs.get(membership=enrolled.membership)
    staff = staff_of(org)

    listing = staff.get("/admin/learn/coursecompletion/", {"q": enrolled.user.email})
    assert listing.status_code == 200
    assert list(listing.context["cl"].result_list) == [completion]
    every = staff.get("/admin/learn/coursecompletion/").context["cl"].result_list
    assert list(every) == [completion]  # nothing of the other organization
    page = staff.get(f"/admin/learn/coursecompletion/{completion.pk}/change/")
    html = page.content.decode()
    assert page.status_code == 200 and enrolled.user.email in html
    assert 'name="_save"' not in html
    assert staff.get("/admin/learn/coursecompletion/add/").status_code == 403
    delete = staff.post(f"/admin/learn/coursecompletion/{completion.pk}/delete/")
    assert delete.status_code == 403
    assert CourseCompletion.all_orgs.count() == 2
