"""The completions feed (9.6), over real HTTP to the live server: every completion of the
organization once, in the order the cursor serves them, after the cursor sent; `next` to
poll with; its bad inputs; who may read it. The concurrency proof (completions committing
out of the order of their times while a reader pages) is test_completions_feed_races.py."""

from __future__ import annotations

import base64

import pytest
from django.utils import timezone

from learn.models import CourseCompletion, Enrollment
from learn.services import unenroll
from lms.pagination import feed_cursor
from organizations.models import Membership
from tests.browser.live_api import LiveApi
from tests.helpers import ApiClient, assert_error, make_member
from tests.learn.factories import ActivityFactory, CourseFactory, EnrollmentFactory

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/learn/completions"


def completed_by(live: LiveApi, course, *members) -> None:
    """Each member, enrolled in ``course``, completes its one activity over the API."""
    activity = ActivityFactory(module__course=course) if not course.activities.exists() else None
    activity = activity or course.activities.get()
    for member in members:
        if not Enrollment.all_orgs.filter(course=course, membership=member.membership).exists():
            EnrollmentFactory(course=course, membership=member.membership)
        body = {"activity": str(activity.id), "reports": [{"type": "complete"}]}
        response = live.post("/api/learn/progress", body, token=member.token)
        assert response.status == 200, response.body[:500]


def read(live: LiveApi, token: str, **query) -> dict:
    response = live.get(URL, token=token, query=query)
    assert response.status == 200, response.body[:500]
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def body_of(completion: CourseCompletion) -> dict:
    return {
        "id": str(completion.id),
        "courseId": str(completion.course_id),
        "memberId": str(completion.membership_id),
        "email": completion.membership.user.email,
        "completedAt": completion.completed_at.isoformat().replace("+00:00", "Z"),
    }


def test_the_feed_serves_every_completion_once_in_order_and_then_the_cursor_sent(
    live, org, owner, course
):
    learners = [make_member(org) for _ in range(3)]
    completed_by(live, course, *learners)
    stored = list(CourseCompletion.all_orgs.order_by("position"))
    assert [c.membership_id for c in stored] == [m.membership.id for m in learners]

    first = read(live, owner.token, limit=2)
    assert first["rows"] == [body_of(c) for c in stored[:2]]
    second = read(live, owner.token, after=first["next"], limit=2)
    assert second["rows"] == [body_of(stored[2])]
    nothing = read(live, owner.token, after=second["next"])
    assert nothing == {"rows": [], "next": second["next"]}

    later = make_member(org)
    completed_by(live, course, later)
    assert [r["memberId"] for r in read(live, owner.token, after=second["next"])["rows"]] == [
        str(later.membership.id)
    ]


def test_a_first_read_of_an_empty_feed_answers_a_cursor_to_poll_with(live, org, owner, course):
    empty = read(live, owner.token)
    assert empty["rows"] == [] and isinstance(empty["next"], str) and empty["next"]
    assert read(live, owner.token, after=empty["next"]) == empty

    learner = make_member(org)
    completed_by(live, course, learner)
    polled = read(live, owner.token, after=empty["next"])
    assert [r["memberId"] for r in polled["rows"]] == [str(learner.membership.id)]
    assert polled["next"] != empty["next"]


def test_course_id_keeps_one_courses_completions(live, org, owner, admin_member, course):
    other_course = CourseFactory(org=org)
    here, there = make_member(org), make_member(org)
    completed_by(live, course, here)
    completed_by(live, other_course, there, here)

    mine = read(live, admin_member.token, courseId=str(other_course.id))
    assert [(r["courseId"], r["memberId"]) for r in mine["rows"]] == [
        (str(other_course.id), str(there.membership.id)),
        (str(other_course.id), str(here.membership.id)),
    ]
    assert read(live, owner.token, courseId=str(course.id), after=mine["next"]) == {
        "rows": [],
        "next": mine["next"],
    }
    assert len(read(live, owner.token)["rows"]) == 3


def test_completions_stay_in_the_feed_after_an_unenrolment(live, org, owner, course):
    learner = make_member(org)
    completed_by(live, course, learner)
    unenroll(org_id=org.id, course_id=course.id, membership_id=learner.membership.id)
    assert not Enrollment.all_orgs.filter(membership=learner.membership).exists()
    [row] = read(live, owner.token)["rows"]
    assert row["memberId"] == str(learner.membership.id)


def test_another_organizations_completions_are_not_in_the_feed(
    live, org, owner, other_org, other_owner, course
):
    completed_by(live, course, make_member(org))
    theirs = CourseFactory(org=other_org)
    completed_by(live, theirs, make_member(other_org))
    assert [r["courseId"] for r in read(live, owner.token)["rows"]] == [str(course.id)]
    assert [r["courseId"] for r in read(live, other_owner.token)["rows"]] == [str(theirs.id)]
    # A course of another organization is no course of this one.
    refused = live.get(URL, token=owner.token, query={"courseId": str(theirs.id)})
    assert (refused.status, list(refused.json()["details"])) == (400, ["courseId"])


@pytest.mark.parametrize("role", [Membership.Role.INSTRUCTOR, Membership.Role.LEARNER])
def test_only_owners_and_admins_read_the_feed(live, org, role):
    member = make_member(org, role)
    response = live.get(URL, token=member.token)
    assert (response.status, response.json()["error"]) == (403, "permission_denied")
    assert live.get(URL).status == 401


PADDED = feed_cursor(5) + "="
BAD = {
    "after": [
        "",
        "x",
        "not a cursor",
        PADDED,
        feed_cursor(5)[:-1],
        feed_cursor(5)[:-1] + "+",  # the standard alphabet is not the cursor's
        "AgAAAAAAAAAF",  # version 2
        base64.urlsafe_b64encode(b"\x01" + (2**63).to_bytes(8, "big")).decode(),  # too far
        "é" * 12,
    ],
    "limit": ["0", "1001", "-1", "a", "", "1.0", "10 "],
    "courseId": ["nope", "", "00000000000000000000000000000000"],
}


@pytest.mark.parametrize(
    ("name", "value"), [(name, value) for name, values in BAD.items() for value in values]
)
def test_a_bad_parameter_is_a_400_naming_it(org, owner, name, value):
    response = ApiClient().get(URL, token=owner.token, query={name: value})
    body = assert_error(response, 400, "validation_error")
    assert list(body["details"]) == [name], body


def test_an_unknown_course_is_a_400_naming_course_id(org, owner):
    missing = "01900000-0000-7000-8000-000000000000"
    response = ApiClient().get(URL, token=owner.token, query={"courseId": missing})
    assert list(assert_error(response, 400, "validation_error")["details"]) == ["courseId"]


def test_limits_at_the_bounds_are_taken(org, owner):
    for limit in ("1", "1000"):
        response = ApiClient().get(URL, token=owner.token, query={"limit": limit})
        assert response.status_code == 200, response.content[:300]


def test_the_feed_reads_in_a_constant_number_of_queries(
    live, org, owner, course, django_assert_max_num_queries
):
    api = ApiClient()
    completed_by(live, course, *[make_member(org) for _ in range(3)])
    for query in ({}, {"courseId": str(course.id)}):
        with django_assert_max_num_queries(3):
            few = api.get(URL, token=owner.token, query=query)
        assert len(few.json()["rows"]) == 3
    completed_by(live, course, *[make_member(org) for _ in range(12)])
    for query in ({}, {"courseId": str(course.id)}, {"after": few.json()["next"]}):
        with django_assert_max_num_queries(3):
            many = api.get(URL, token=owner.token, query=query)
        assert len(many.json()["rows"]) in (12, 15)
    empty = {"courseId": str(CourseFactory(org=org).id), "after": many.json()["next"]}
    with django_assert_max_num_queries(3):
        assert api.get(URL, token=owner.token, query=empty).json()["rows"] == []


def test_a_completion_stored_without_a_position_takes_the_next_one(live, org, owner, course):
    first = make_member(org)
    completed_by(live, course, first)
    later = make_member(org)
    stored = CourseCompletion.all_orgs.create(
        org=org, membership=later.membership, course=course, completed_at=timezone.now()
    )
    assert stored.position == 2
    assert [row["memberId"] for row in read(live, owner.token)["rows"]] == [
        str(first.membership.id),
        str(later.membership.id),
    ]
