"""9.2 and 7.3: accepting an invite with courses enrols the new member in each of them in
the accept's transaction, one ``enrollment.created`` event each, through the one enrolment
service; over real HTTP too."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from automations.models import AutomationRun
from learn.models import Enrollment
from organizations.models import Invite, Membership
from organizations.services import create_invite
from tests.automations.factories import AutomationFactory
from tests.browser.live_api import LiveApi
from tests.helpers import assert_error, make_member
from tests.learn.factories import ActivityFactory, CourseFactory

pytestmark = pytest.mark.django_db

URL = "/api/organizations/invites"
Role = Membership.Role


def invite_into(api, owner, courses, **changes) -> dict:
    body = {
        "email": "grace@example.com",
        "firstName": "Grace",
        "lastName": "Hopper",
        "courseIds": [str(course.id) for course in courses],
    } | changes
    response = api.post(URL, body, token=owner.token)
    assert response.status_code == 201, response.content
    return response.json()


def enrolled_courses(membership_id) -> set:
    return set(
        Enrollment.all_orgs.filter(membership_id=membership_id).values_list("course_id", flat=True)
    )


def test_accepting_enrols_the_new_member_in_the_invites_courses(api, org, owner, recorded_events):
    courses = [CourseFactory(org=org), CourseFactory(org=org, published=False)]
    other = CourseFactory(org=org)
    created = invite_into(api, owner, courses)
    recorded_events.clear()

    accepted = api.post(f"{URL}/{created['token']}/accept")

    assert accepted.status_code == 201, accepted.content
    member = Membership.objects.for_org(org).get(user__email="grace@example.com")
    assert enrolled_courses(member.id) == {course.id for course in courses}
    assert other.id not in enrolled_courses(member.id)
    enrolments = [e for e in recorded_events if e.type == "enrollment.created"]
    assert sorted(e.data["courseId"] for e in enrolments) == sorted(str(c.id) for c in courses)
    assert {e.data["memberId"] for e in enrolments} == {str(member.id)}
    assert [e.type for e in recorded_events].count("invite.accepted") == 1
    # The new member reads their course at once (7.4), with their new token.
    token = accepted.json()["token"]
    ActivityFactory(module__course=courses[0], org=org)
    progress = api.get(f"/api/learn/courses/{courses[0].id}/progress", token=token)
    assert progress.status_code == 200, progress.content


def test_an_existing_member_already_enrolled_is_one_event_less(api, org, owner, recorded_events):
    courses = [CourseFactory(org=org), CourseFactory(org=org)]
    existing = make_member(org, Role.LEARNER)
    # An invite to a member is refused over the API; the admin or a command may make one.
    Enrollment.objects.create(org=org, membership=existing.membership, course=courses[0])
    _, raw = create_invite(
        org=org,
        email=existing.user.email,
        first_name="X",
        last_name="Y",
        course_ids=[course.id for course in courses],
    )
    recorded_events.clear()
    assert api.post(f"{URL}/{raw}/accept").status_code == 201
    assert enrolled_courses(existing.membership.id) == {course.id for course in courses}
    created = [e.data["courseId"] for e in recorded_events if e.type == "enrollment.created"]
    assert created == [str(courses[1].id)]


def test_each_enrolment_starts_the_automations_of_enrollment_created(api, org, owner):
    AutomationFactory(org=org, trigger="enrollment.created")
    courses = [CourseFactory(org=org) for _ in range(3)]
    created = invite_into(api, owner, courses)
    assert api.post(f"{URL}/{created['token']}/accept").status_code == 201
    runs = AutomationRun.objects.for_org(org).filter(trigger="enrollment.created")
    assert sorted(run.event_data["courseId"] for run in runs) == sorted(str(c.id) for c in courses)


def test_a_course_deleted_since_the_invite_is_not_enrolled_in(api, org, owner):
    kept, gone = CourseFactory(org=org), CourseFactory(org=org)
    created = invite_into(api, owner, [kept, gone])
    gone.delete()
    listed = api.get(URL, token=owner.token).json()["rows"][0]
    assert listed["courseIds"] == [str(kept.id)]
    assert api.post(f"{URL}/{created['token']}/accept").status_code == 201
    member = Membership.objects.for_org(org).get(user__email="grace@example.com")
    assert enrolled_courses(member.id) == {kept.id}


def test_an_enrolment_that_fails_fails_the_accept_as_a_whole(api, org, owner, failing_receiver):
    course = CourseFactory(org=org)
    created = invite_into(api, owner, [course])
    failing_receiver("enrollment.created")
    response = api.post(f"{URL}/{created['token']}/accept")
    assert_error(response, 500, "internal_error")
    assert not Membership.objects.for_org(org).filter(user__email="grace@example.com").exists()
    assert not Enrollment.objects.for_org(org).filter(course=course).exists()
    assert Invite.objects.for_org(org).get(id=created["id"]).status == "pending"


@pytest.mark.django_db(transaction=True)
def test_over_real_http_the_invitee_lands_in_the_course(live_server, org):
    live = LiveApi(live_server.url)
    owner = make_member(org, Role.OWNER)
    course = CourseFactory(org=org)
    ActivityFactory(module__course=course, org=org)
    created = live.post(
        URL,
        {
            "email": "grace@example.com",
            "firstName": "Grace",
            "lastName": "Hopper",
            "courseIds": [str(course.id)],
        },
        token=owner.token,
    )
    assert created.status == 201, created.body
    accepted = live.post(f"{URL}/{created.json()['token']}/accept")
    assert accepted.status == 201, accepted.body
    token = accepted.json()["token"]
    courses = live.get("/api/learn/courses", token=token).json()
    assert [row["id"] for row in courses["rows"]] == [str(course.id)]
    listed = live.get(URL, token=owner.token, query={"status": "accepted"}).json()["rows"]
    member = Membership.objects.for_org(org).get(user__email="grace@example.com")
    assert listed[0]["memberId"] == str(member.id)


def test_accepting_costs_a_constant_number_of_queries_per_course(api, org, owner):
    """Each course is one call of the enrolment service, at the same cost."""
    warm = invite_into(api, owner, [], email="warm@example.com")
    api.post(f"{URL}/{warm['token']}/accept")  # the address's first request purges windows
    counts = []
    for n, course_count in enumerate((1, 2, 3)):
        courses = [CourseFactory(org=org) for _ in range(course_count)]
        created = invite_into(api, owner, courses, email=f"p{n}@example.com")
        with CaptureQueriesContext(connection) as captured:
            assert api.post(f"{URL}/{created['token']}/accept").status_code == 201
        counts.append(len(captured))
    assert counts[2] - counts[1] == counts[1] - counts[0] > 0
