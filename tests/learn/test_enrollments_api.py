"""9.3 POST /api/learn/courses/{courseId}/enrollments and DELETE .../enrollments/{memberId}
over real HTTP (the live server): who may, the order of the checks, all or nothing, the due
date, idempotency, and what an unenrolled learner is answered afterwards."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from learn.models import Enrollment, Progress
from tests.browser.live_api import LiveApi
from tests.factories import MembershipFactory
from tests.helpers import (
    ApiClient,
    assert_error,
    assert_foreign_looks_missing,
    at_once,
    make_member,
)
from tests.learn.factories import ActivityFactory, CourseFactory
from tests.learn.progress import report

pytestmark = pytest.mark.django_db(transaction=True)

MISSING = "00000000-0000-7000-8000-000000000000"
FUTURE = "2099-01-31T17:00:00Z"


@pytest.fixture
def http(live_server) -> LiveApi:
    return LiveApi(live_server.url)


def url(course, member=None) -> str:
    base = f"/api/learn/courses/{getattr(course, 'id', course)}/enrollments"
    return base if member is None else f"{base}/{getattr(member, 'id', member)}"


def ids(*members) -> list[str]:
    return [str(m.membership.id) for m in members]


def enrolled_ids(course) -> set[str]:
    rows = Enrollment.objects.for_org(course.org_id).filter(course=course)
    return {str(member_id) for member_id in rows.values_list("membership_id", flat=True)}


@pytest.fixture
def learners(org):
    return [make_member(org) for _ in range(3)]


@pytest.mark.parametrize("staff", ["owner", "admin_member", "instructor"])
def test_staff_enrol_members_by_id_in_the_order_given(request, http, course, learners, staff):
    caller = request.getfixturevalue(staff)
    first, second, third = learners
    response = http.post(url(course), {"memberIds": ids(second)}, token=caller.token)
    assert response.status == 200 and response.json() == {
        "enrolled": ids(second),
        "alreadyEnrolled": [],
    }
    response = http.post(url(course), {"memberIds": ids(third, second, first)}, token=caller.token)
    assert response.json() == {"enrolled": ids(third, first), "alreadyEnrolled": ids(second)}
    assert enrolled_ids(course) == set(ids(*learners))


def test_members_are_found_by_email_in_any_case(http, owner, course, learners):
    first, second, _ = learners
    emails = [first.user.email.upper(), second.user.email]
    response = http.post(url(course), {"emails": emails}, token=owner.token)
    assert response.json() == {"enrolled": ids(first, second), "alreadyEnrolled": []}


def test_a_learner_may_not_enrol_even_with_a_bad_body(http, learner, course):
    assert_error(
        http.post(url(course), {"memberIds": [1]}, token=learner.token), 403, "permission_denied"
    )
    assert_error(
        http.delete(url(course, learner.membership), token=learner.token), 403, "permission_denied"
    )
    assert_error(http.post(url(course), {"memberIds": []}), 401, "unauthenticated")


def test_a_bad_body_is_400_before_an_unknown_course_is_404(http, owner, learners):
    response = http.post(url(MISSING), {"memberIds": []}, token=owner.token)
    assert "memberIds" in assert_error(response, 400, "validation_error")["details"]
    response = http.post(url(MISSING), {"memberIds": ids(learners[0])}, token=owner.token)
    assert_error(response, 404, "not_found")


def test_a_foreign_course_looks_missing(http, owner, other_org, learners):
    foreign = CourseFactory(org=other_org)
    body = {"memberIds": ids(learners[0])}
    assert_foreign_looks_missing(
        http, "POST", url(foreign), url(MISSING), token=owner.token, data=body
    )
    assert_foreign_looks_missing(
        http,
        "DELETE",
        url(foreign, learners[0].membership),
        url(MISSING, learners[0].membership),
        token=owner.token,
    )
    assert not Enrollment.all_orgs.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "memberIds"),
        ({"memberIds": []}, "memberIds"),
        ({"emails": []}, "emails"),
        ({"memberIds": "x"}, "memberIds"),
        ({"memberIds": [MISSING], "emails": ["a@example.com"]}, "emails"),
        ({"memberIds": [MISSING] * 501}, "memberIds"),
        ({"memberIds": ["not-an-id"]}, "memberIds.0"),
        ({"memberIds": [7]}, "memberIds.0"),
        ({"emails": [7]}, "emails.0"),
        ({"emails": [""]}, "emails.0"),
        ({"memberIds": [MISSING], "dueAt": "2020-01-01T00:00:00Z"}, "dueAt"),
        ({"memberIds": [MISSING], "dueAt": "2099-01-01T00:00:00"}, "dueAt"),
        ({"memberIds": [MISSING], "dueAt": 4102444800}, "dueAt"),
        ({"memberIds": [MISSING], "dueAt": "soon"}, "dueAt"),
    ],
)
def test_every_bad_body_is_a_400_naming_the_field(http, owner, course, body, field):
    body_ = assert_error(http.post(url(course), body, token=owner.token), 400, "validation_error")
    assert field in body_["details"], body_


def test_a_repeated_item_is_a_400_naming_the_later_one(http, owner, course, learners):
    first, second, _ = learners
    body = {"memberIds": ids(first, second, first)}
    details = assert_error(
        http.post(url(course), body, token=owner.token), 400, "validation_error"
    )["details"]
    assert details == {"memberIds.2": ["Repeats memberIds.0."]}
    emails = [first.user.email, second.user.email.upper(), second.user.email.lower()]
    response = http.post(url(course), {"emails": emails}, token=owner.token)
    assert assert_error(response, 400, "validation_error")["details"] == {
        "emails.2": ["Repeats emails.1."]
    }
    assert not enrolled_ids(course)


def test_an_unknown_member_enrols_nobody(http, owner, other_owner, course, learners):
    foreign = ids(other_owner)[0]
    body = {"memberIds": [*ids(learners[0]), MISSING, foreign]}
    details = assert_error(
        http.post(url(course), body, token=owner.token), 400, "validation_error"
    )["details"]
    assert set(details) == {"memberIds.1", "memberIds.2"}
    body = {"emails": [learners[0].user.email, other_owner.user.email]}
    details = assert_error(
        http.post(url(course), body, token=owner.token), 400, "validation_error"
    )["details"]
    assert set(details) == {"emails.1"}
    assert not enrolled_ids(course)


def test_an_unpublished_course_takes_enrolments(http, instructor, org, learners):
    draft = CourseFactory(org=org, published=False)
    response = http.post(url(draft), {"memberIds": ids(learners[0])}, token=instructor.token)
    assert response.status == 200 and enrolled_ids(draft) == set(ids(learners[0]))


def test_a_due_date_is_set_replaced_kept_and_cleared(http, owner, course, learners):
    first, second, _ = learners

    def due(member):
        return (
            Enrollment.objects.for_org(course.org_id)
            .get(course=course, membership=member.membership)
            .due_at
        )

    http.post(url(course), {"memberIds": ids(first), "dueAt": FUTURE}, token=owner.token)
    assert due(first) == datetime(2099, 1, 31, 17, 0, tzinfo=UTC)
    http.post(url(course), {"memberIds": ids(first, second)}, token=owner.token)
    assert due(first) == datetime(2099, 1, 31, 17, 0, tzinfo=UTC) and due(second) is None
    soon = (timezone.now() + timedelta(days=1)).replace(microsecond=0)
    body = {"memberIds": ids(first), "dueAt": soon.isoformat().replace("+00:00", "+02:00")}
    http.post(url(course), body, token=owner.token)
    assert due(first) == soon - timedelta(hours=2)
    response = http.post(url(course), {"memberIds": ids(first), "dueAt": None}, token=owner.token)
    assert response.json()["alreadyEnrolled"] == ids(first) and due(first) is None


def test_an_idempotency_key_answers_the_first_answer_again(http, owner, course, learners):
    headers = {"Idempotency-Key": "enrol-1"}
    body = {"memberIds": ids(learners[0])}
    first = http.post(url(course), body, token=owner.token, headers=headers)
    again = http.post(url(course), body, token=owner.token, headers=headers)
    assert first.json() == again.json() == {"enrolled": ids(learners[0]), "alreadyEnrolled": []}
    assert again.headers.get("idempotent-replayed") == "true"
    response = http.post(url(course), body, token=owner.token, headers={"Idempotency-Key": ""})
    assert "Idempotency-Key" in assert_error(response, 400, "validation_error")["details"]


def test_unenrolling_answers_204_then_404(http, owner, course, learners):
    member = learners[0]
    http.post(url(course), {"memberIds": ids(member)}, token=owner.token)
    response = http.delete(url(course, member.membership), token=owner.token)
    assert response.status == 204 and response.body == b""
    assert_error(http.delete(url(course, member.membership), token=owner.token), 404, "not_found")
    assert_error(http.delete(url(course, MISSING), token=owner.token), 404, "not_found")
    assert_error(http.delete(url(course, "not-an-id"), token=owner.token), 404, "not_found")


def test_an_unenrolled_learner_is_refused_and_a_re_enrolment_restores_them(
    http, owner, org, course, learners
):
    learner = learners[0]
    first = ActivityFactory(org=org, module__course=course)
    second = ActivityFactory(org=org, module=first.module)
    http.post(url(course), {"memberIds": ids(learner)}, token=owner.token)
    report(http, learner, first, {"type": "complete"})
    progress_url = f"/api/learn/courses/{course.id}/progress"
    before = http.get(progress_url, token=learner.token).json()
    assert before["status"] == "in-progress"

    assert http.delete(url(course, learner.membership), token=owner.token).status == 204
    refused = [
        http.post(
            "/api/learn/progress",
            {"activity": str(second.id), "reports": [{"type": "complete"}]},
            token=learner.token,
        ),
        http.get(f"/api/learn/courses/{course.id}/activities", token=learner.token),
        http.get(progress_url, token=learner.token),
        http.get(f"/api/learn/courses/{course.id}", token=learner.token),
    ]
    for response in refused:  # 4.3, 4.4, 7.4 and 8.2
        assert_error(response, 403, "not_enrolled")
    assert http.get("/api/learn/courses", token=learner.token).json()["rows"] == []
    assert Progress.objects.for_org(org).count() == 1

    again = http.post(url(course), {"memberIds": ids(learner)}, token=owner.token)
    assert again.json() == {"enrolled": ids(learner), "alreadyEnrolled": []}
    assert http.get(progress_url, token=learner.token).json() == before
    (listed,) = http.get("/api/learn/courses", token=learner.token).json()["rows"]
    row = Enrollment.objects.for_org(org).get(course=course)
    assert listed["enrolledAt"] == row.created_at.isoformat().replace("+00:00", "Z")


@pytest.mark.postgres
def test_racing_enrol_requests_make_each_enrolment_one_event(owner, org, course, recorded_events):
    members = [make_member(org) for _ in range(12)]
    body = {"memberIds": ids(*members)}
    responses = at_once([lambda api: api.post(url(course), body, token=owner.token)] * 6)
    assert [r.status_code for r in responses] == [200] * 6
    enrolled = [member for r in responses for member in r.json()["enrolled"]]
    assert sorted(enrolled) == sorted(ids(*members))
    created = [e for e in recorded_events if e.type == "enrollment.created"]
    assert sorted(e.data["memberId"] for e in created) == sorted(ids(*members))


def test_enrolling_500_costs_the_queries_of_enrolling_one(org, owner, course):
    api, counts = ApiClient(), []
    for count in (1, 500):
        members = [str(MembershipFactory(org=org).id) for _ in range(count)]
        with CaptureQueriesContext(connection) as captured:
            response = api.post(url(course), {"memberIds": members}, token=owner.token)
        assert response.status_code == 200 and response.json()["enrolled"] == members
        counts.append(len(captured))
    assert counts[0] == counts[1]
