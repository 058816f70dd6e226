"""9.4 GET /api/learn/courses/{courseId}/enrollments (the roster) and 9.5 GET
/api/learn/courses/{courseId}/report, over real HTTP: rows as 7.4 answers each learner,
filters, sorts with nulls last both ways, paging, roles, tenancy and bad parameters."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from learn.models import Enrollment
from learn.services import enroll_members, unenroll
from tests.helpers import assert_error, make_member
from tests.learn.factories import ActivityFactory, CourseFactory, ModuleFactory
from tests.learn.progress import report

pytestmark = pytest.mark.django_db

ROW_KEYS = [
    "memberId",
    "email",
    "firstName",
    "lastName",
    "enrolledAt",
    "dueAt",
    "status",
    "progress",
    "completedAt",
    "lastActivityAt",
    "overdue",
]


def roster_url(course) -> str:
    return f"/api/learn/courses/{getattr(course, 'id', course)}/enrollments"


def report_url(course) -> str:
    return f"/api/learn/courses/{getattr(course, 'id', course)}/report"


@pytest.fixture
def class_of(org, course):
    """Four learners in a course of two listed activities (and one unlisted): Ada completed
    it, Bob started, Cy nothing and is overdue, Di nothing and due later."""
    module = ModuleFactory(course=course, seq=1)
    first = ActivityFactory(module=module, seq=1)
    second = ActivityFactory(module=module, seq=2)
    ActivityFactory(module=module, seq=3, published=False)
    names = ["ada", "Bob", "cy", "di"]
    members = {
        name: make_member(org, user__email=f"{name}@example.com", user__first_name=name.title())
        for name in names
    }
    now = timezone.now()
    ids = {name: member.membership.id for name, member in members.items()}
    enroll_members(org_id=org.id, course_id=course.id, membership_ids=[ids["ada"], ids["Bob"]])
    enroll_members(
        org_id=org.id, course_id=course.id, membership_ids=[ids["cy"]], due_at=now - timedelta(1)
    )
    enroll_members(
        org_id=org.id, course_id=course.id, membership_ids=[ids["di"]], due_at=now + timedelta(1)
    )
    for activity in (first, second):
        report(pytest.api, members["ada"], activity, {"type": "time", "seconds": 1})
    report(pytest.api, members["Bob"], first, {"type": "time", "seconds": 1})
    return members, [first, second]


@pytest.fixture(autouse=True)
def _api(api):
    pytest.api = api  # the fixture above reports through the real HTTP client
    yield
    del pytest.api


def read(api, member, course, **query) -> dict:
    response = api.get(roster_url(course), token=member.token, query=query)
    assert response.status_code == 200, response.content[:500]
    return response.json()


def emails(body) -> list[str]:
    return [row["email"].lower() for row in body["rows"]]


def test_each_row_is_what_the_learner_is_told(api, owner, course, class_of):
    members, _ = class_of
    body = read(api, owner, course, sort="email")
    assert body["total"] == 4 and body["page"] == 1 and body["pageSize"] == 20
    assert emails(body) == [
        "ada@example.com",
        "bob@example.com",
        "cy@example.com",
        "di@example.com",
    ]
    for row in body["rows"]:
        assert list(row) == ROW_KEYS
        member = members[row["email"].split("@")[0]]
        told = api.get(f"/api/learn/courses/{course.id}/progress", token=member.token).json()
        assert (row["status"], row["progress"], row["completedAt"]) == (
            told["status"],
            told["progress"],
            told["completedAt"],
        )
        assert row["memberId"] == str(member.membership.id)
    ada, bob, cy, di = body["rows"]
    assert ada["status"] == "completed" and ada["lastActivityAt"] is not None
    assert bob["status"] == "in-progress" and bob["progress"] == 0.5
    assert cy["overdue"] is True and di["overdue"] is False and ada["overdue"] is False
    assert cy["lastActivityAt"] is None and cy["dueAt"].endswith("Z")


def test_filters(api, instructor, course, class_of):
    assert emails(read(api, instructor, course, status="completed")) == ["ada@example.com"]
    assert emails(read(api, instructor, course, status="in-progress")) == ["bob@example.com"]
    assert read(api, instructor, course, status="not-started")["total"] == 2
    assert emails(read(api, instructor, course, overdue="true")) == ["cy@example.com"]
    assert read(api, instructor, course, overdue="false")["total"] == 3
    assert emails(read(api, instructor, course, search="BO")) == ["bob@example.com"]
    assert emails(read(api, instructor, course, search="Di")) == ["di@example.com"]  # a name
    assert read(api, instructor, course, search="%")["total"] == 0
    assert read(api, instructor, course, search="")["total"] == 4


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("dueAt", ["cy", "di", "ada", "bob"]),  # nulls last, then the member id
        ("-dueAt", ["di", "cy", "ada", "bob"]),  # nulls last descending too
        ("-completedAt,email", ["ada", "bob", "cy", "di"]),
        ("-progress,email", ["ada", "bob", "cy", "di"]),
        ("-email", ["di", "cy", "bob", "ada"]),
        ("lastActivityAt,email", ["ada", "bob", "cy", "di"]),
    ],
)
def test_sorts_put_nulls_last_both_ways(api, admin_member, course, class_of, sort, expected):
    members, _ = class_of
    body = read(api, admin_member, course, sort=sort)
    got = [row["email"].split("@")[0].lower() for row in body["rows"]]
    if sort in ("dueAt", "-dueAt"):  # ada and bob tie on null: the member id decides
        ties = sorted(["ada", "Bob"], key=lambda name: members[name].membership.id)
        if sort.startswith("-"):
            ties.reverse()
        expected = expected[:2] + [name.lower() for name in ties]
    assert got == expected


def test_paging_is_stable(api, owner, course, class_of):
    pages = [read(api, owner, course, sort="progress", pageSize=3, page=n) for n in (1, 2, 3)]
    assert [len(page["rows"]) for page in pages] == [3, 1, 0]
    assert all(page["total"] == 4 for page in pages)
    assert len({row["memberId"] for page in pages for row in page["rows"]}) == 4


def test_an_unenrolled_learner_leaves_the_roster_and_comes_back_as_before(
    api, owner, org, course, class_of
):
    members, _ = class_of
    ada = members["ada"].membership.id
    before = {row["memberId"]: row for row in read(api, owner, course)["rows"]}[str(ada)]
    unenroll(org_id=org.id, course_id=course.id, membership_id=ada)
    assert read(api, owner, course)["total"] == 3
    assert read(api, owner, course, status="completed")["total"] == 0
    enroll_members(org_id=org.id, course_id=course.id, membership_ids=[ada])
    again = {row["memberId"]: row for row in read(api, owner, course)["rows"]}[str(ada)]
    assert {k: again[k] for k in ("status", "progress", "completedAt", "lastActivityAt")} == {
        k: before[k] for k in ("status", "progress", "completedAt", "lastActivityAt")
    }
    assert again["enrolledAt"] > before["enrolledAt"]


def test_an_unpublished_course_answers_as_if_published(api, owner, org, course, class_of):
    course.published = False
    course.save()
    body = read(api, owner, course, sort="email")
    assert [row["status"] for row in body["rows"]] == [
        "completed",
        "in-progress",
        "not-started",
        "not-started",
    ]


def test_the_report(api, owner, course, class_of):
    _, (first, second) = class_of
    response = api.get(report_url(course), token=owner.token)
    assert response.status_code == 200
    body = response.json()
    assert body == {
        "courseId": str(course.id),
        "title": course.title,
        "enrolled": 4,
        "notStarted": 2,
        "inProgress": 1,
        "completed": 1,
        "overdue": 1,
        "completionRate": 0.25,
        "activities": [
            {
                "id": str(first.id),
                "moduleId": str(first.module_id),
                "seq": 1,
                "title": first.title,
                "started": 2,
                "completed": 2,
            },
            {
                "id": str(second.id),
                "moduleId": str(second.module_id),
                "seq": 2,
                "title": second.title,
                "started": 1,
                "completed": 1,
            },
        ],
    }


def test_an_empty_course_reports_zeros(api, owner, org):
    body = api.get(report_url(CourseFactory(org=org, published=False)), token=owner.token).json()
    assert body["enrolled"] == 0 and body["completionRate"] == 0 and body["activities"] == []


@pytest.mark.parametrize("url", [roster_url, report_url])
def test_roles_and_tenancy(api, learner, owner, other_owner, course, url):
    assert_error(api.get(url(course), token=learner.token), 403, "permission_denied")
    assert_error(api.get(url(course), token=other_owner.token), 404, "not_found")
    assert_error(api.get(url("not-an-id"), token=owner.token), 404, "not_found")
    assert_error(api.get(url(course)), 401, "unauthenticated")


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"status": "done"}, "status"),
        ({"overdue": "yes"}, "overdue"),
        ({"status": ""}, "status"),
        ({"overdue": ""}, "overdue"),
        ({"sort": "name"}, "sort"),
        ({"sort": "email,"}, "sort"),
        ({"sort": ""}, "sort"),
        ({"search": "x" * 201}, "search"),
        ({"page": "0"}, "page"),
        ({"pageSize": "101"}, "pageSize"),
    ],
)
def test_bad_parameters(api, owner, course, query, field):
    body = assert_error(
        api.get(roster_url(course), token=owner.token, query=query), 400, "validation_error"
    )
    assert field in body["details"]


def test_a_bad_parameter_is_answered_before_a_missing_course(api, owner):
    missing = "00000000-0000-7000-8000-000000000000"
    response = api.get(roster_url(missing), token=owner.token, query={"status": "x"})
    assert_error(response, 400, "validation_error")


def test_queries_are_constant(api, owner, org, course, class_of, django_assert_max_num_queries):
    more = [make_member(org).membership.id for _ in range(30)]
    enroll_members(org_id=org.id, course_id=course.id, membership_ids=more)
    for query in ({}, {"page": 2, "pageSize": 5}, {"status": "not-started", "search": "e"}):
        with django_assert_max_num_queries(5):  # token, course, the page's ids, count, rows
            read(api, owner, course, **query)
    with django_assert_max_num_queries(4):  # token, course, counts, funnel
        api.get(report_url(course), token=owner.token)
    assert Enrollment.objects.for_org(org).filter(course=course).count() == 34


def test_a_changed_email_or_name_is_searched_and_sorted(api, owner, course, class_of):
    members, _ = class_of
    user = members["cy"].membership.user
    user.email, user.last_name = "aaron@example.com", "Zimmer"
    user.save()
    assert emails(read(api, owner, course, sort="email"))[0] == "aaron@example.com"
    assert emails(read(api, owner, course, search="zimm")) == ["aaron@example.com"]
