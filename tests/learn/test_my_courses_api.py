"""8.1 GET /api/learn/courses: the published courses the caller is enrolled in, most recently
enrolled first, paged like the bundles, with the caller's standing on each."""

from datetime import UTC, datetime, timedelta

import pytest

from learn.models import CourseCompletion, Enrollment
from learn.serializers import EnrolledCourseSerializer
from learn.wire_reads import my_courses
from lms.pagination import Page
from tests.helpers import assert_error, make_member, prepared_statements
from tests.learn.factories import ActivityFactory, CourseFactory, EnrollmentFactory, ModuleFactory
from tests.learn.progress import report

pytestmark = pytest.mark.django_db

URL = "/api/learn/courses"
ROW_KEYS = {
    "id",
    "orgId",
    "title",
    "enrolledAt",
    "status",
    "progress",
    "completedAt",
    "activityCount",
}
# A row holds exactly its serializer's fields, the contract's keys (8.1, ROW_KEYS) among them.
DECLARED = list(EnrolledCourseSerializer().fields)
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def listing(api, member, **query) -> dict:
    response = api.get(URL, token=member.token, query=query or None)
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert set(body) == {"rows", "total", "page", "pageSize"}
    for row in body["rows"]:
        assert list(row) == DECLARED
        assert set(row) >= ROW_KEYS
    return body


def ids(body) -> list[str]:
    return [row["id"] for row in body["rows"]]


def enroll(member, course, at: datetime | None = None) -> Enrollment:
    enrollment = EnrollmentFactory(course=course, membership=member.membership)
    if at is not None:
        Enrollment.all_orgs.filter(pk=enrollment.pk).update(created_at=at)
        enrollment.refresh_from_db()
    return enrollment


def with_activities(course, count: int, published_module: bool = True) -> list:
    module = ModuleFactory(course=course, seq=1, published=published_module)
    return [ActivityFactory(module=module, seq=n + 1) for n in range(count)]


def test_lists_the_published_courses_the_caller_is_enrolled_in(api, org, learner, other_org):
    mine = CourseFactory(org=org, title="Mine")
    unpublished = CourseFactory(org=org, published=False)
    CourseFactory(org=org)  # not enrolled
    enroll(learner, mine)
    enroll(learner, unpublished)
    classmate = make_member(org)
    enroll(classmate, CourseFactory(org=org))  # another member's
    theirs = CourseFactory(org=other_org)
    EnrollmentFactory(course=theirs, membership=make_member(other_org).membership)
    body = listing(api, learner)
    assert ids(body) == [str(mine.id)]
    assert (body["total"], body["page"], body["pageSize"]) == (1, 1, 20)


def test_a_row_has_the_course_the_enrollment_time_and_the_callers_standing(api, org, learner):
    course = CourseFactory(org=org, title="Python from scratch")
    first, second, _ = with_activities(course, 3)
    second.settings = {"completion": {"type": "reported"}}
    second.save()
    ActivityFactory(module=first.module, seq=9, published=False)
    enroll(learner, course, at=datetime(2026, 3, 1, 9, 30, 0, 120000, tzinfo=UTC))
    report(api, learner, first, {"type": "complete"})
    report(api, learner, second, {"type": "bookmark"})
    [row] = listing(api, learner)["rows"]
    assert {key: row[key] for key in ROW_KEYS} == {
        "id": str(course.id),
        "orgId": str(org.id),
        "title": "Python from scratch",
        "enrolledAt": "2026-03-01T09:30:00.120000Z",
        "status": "in-progress",
        "progress": 0.333,
        "completedAt": None,
        "activityCount": 3,
    }


def test_standing_and_count_are_those_of_the_course_progress_and_listing(api, org, learner):
    started, done, untouched, empty = (CourseFactory(org=org) for _ in range(4))
    activities = {
        course: with_activities(course, n)
        for course, n in [(started, 2), (done, 2), (untouched, 1)]
    }
    with_activities(empty, 2, published_module=False)
    for course in (started, done, untouched, empty):
        enroll(learner, course)
    report(api, learner, activities[started][1], {"type": "complete"})
    for activity in activities[done]:
        report(api, learner, activity)
    rows = {row["id"]: row for row in listing(api, learner)["rows"]}
    for course in (started, done, untouched, empty):
        progress = api.get(f"/api/learn/courses/{course.id}/progress", token=learner.token).json()
        listed = api.get(f"/api/learn/courses/{course.id}/activities", token=learner.token).json()
        row = rows[str(course.id)]
        assert (row["status"], row["progress"], row["completedAt"]) == (
            progress["status"],
            progress["progress"],
            progress["completedAt"],
        )
        assert row["activityCount"] == len(listed)
    assert [rows[str(c.id)]["status"] for c in (started, done, untouched, empty)] == [
        "in-progress",
        "completed",
        "not-started",
        "not-started",
    ]
    completion = CourseCompletion.all_orgs.get(membership=learner.membership, course=done)
    assert rows[str(done.id)]["completedAt"] == completion.completed_at.isoformat().replace(
        "+00:00", "Z"
    )


def test_progress_counts_only_the_callers_reports(api, org, learner):
    course = CourseFactory(org=org)
    [activity] = with_activities(course, 1)
    classmate = make_member(org)
    enroll(classmate, course)
    report(api, classmate, activity)
    enroll(learner, course)
    [row] = listing(api, learner)["rows"]
    assert (row["status"], row["progress"]) == ("not-started", 0.0)


def test_most_recently_enrolled_first(api, org, learner):
    courses = [CourseFactory(org=org) for _ in range(3)]
    for hours, course in zip([2, 0, 1], courses, strict=True):
        enroll(learner, course, at=T0 + timedelta(hours=hours))
    assert ids(listing(api, learner)) == [
        str(courses[0].id),
        str(courses[2].id),
        str(courses[1].id),
    ]


def test_the_course_id_breaks_a_tie_descending(api, org, learner):
    courses = [CourseFactory(org=org) for _ in range(4)]
    for course in courses:
        enroll(learner, course, at=T0)
    expected = sorted((str(course.id) for course in courses), reverse=True)
    assert ids(listing(api, learner)) == expected
    pages = [ids(listing(api, learner, page=n, pageSize=1)) for n in (1, 2, 3, 4)]
    assert [page[0] for page in pages] == expected


def test_pages_of_the_list(api, org, learner):
    courses = [CourseFactory(org=org) for _ in range(5)]
    for hours, course in enumerate(courses):
        enroll(learner, course, at=T0 + timedelta(hours=hours))
    newest_first = [str(course.id) for course in reversed(courses)]
    for page, expected in [(1, newest_first[:2]), (2, newest_first[2:4]), (3, newest_first[4:])]:
        body = listing(api, learner, page=page, pageSize=2)
        assert (ids(body), body["total"], body["page"], body["pageSize"]) == (
            expected,
            5,
            page,
            2,
        )
    past = listing(api, learner, page=4, pageSize=2)
    assert (past["rows"], past["total"]) == ([], 5)
    huge = listing(api, learner, page=9007199254740991)
    assert (huge["rows"], huge["total"]) == ([], 5)


def test_a_member_enrolled_nowhere_gets_an_empty_page(api, learner):
    assert listing(api, learner) == {"rows": [], "total": 0, "page": 1, "pageSize": 20}


def test_unknown_query_parameters_are_ignored(api, org, learner):
    course = CourseFactory(org=org)
    enroll(learner, course)
    assert ids(listing(api, learner, sort="title", search="x")) == [str(course.id)]


@pytest.mark.parametrize(
    "query, field",
    [
        ({"page": "0"}, "page"),
        ({"page": "9007199254740992"}, "page"),
        ({"page": "two"}, "page"),
        ({"page": "1.5"}, "page"),
        ({"pageSize": "0"}, "pageSize"),
        ({"pageSize": "101"}, "pageSize"),
        ({"pageSize": ""}, "pageSize"),
    ],
)
def test_a_bad_page_or_page_size_is_a_validation_error(api, learner, query, field):
    body = assert_error(api.get(URL, token=learner.token, query=query), 400, "validation_error")
    assert set(body["details"]) == {field}


def test_both_bad_paging_parameters_are_named_at_once(api, learner):
    response = api.get(URL, token=learner.token, query={"page": "0", "pageSize": "1000"})
    body = assert_error(response, 400, "validation_error")
    assert set(body["details"]) == {"page", "pageSize"}


def test_any_member_may_list_their_courses(api, org, owner):
    course = CourseFactory(org=org)
    enroll(owner, course)
    assert ids(listing(api, owner)) == [str(course.id)]


def test_without_a_token_is_401(api):
    response = api.get(URL)
    assert_error(response, 401, "unauthenticated")
    assert response["WWW-Authenticate"] == "Bearer"


def test_a_bad_page_without_a_token_is_401_first(api):
    assert_error(api.get(URL, query={"page": "0"}), 401, "unauthenticated")


def test_post_is_405(api, learner):
    assert_error(api.post(URL, {}, token=learner.token), 405, "method_not_allowed")


def test_rows_are_what_the_row_serializer_writes(api, org, learner):
    """The view builds its rows without a serializer; they must read as the schema's."""
    course = CourseFactory(org=org)
    [activity] = with_activities(course, 1)
    enroll(learner, course, at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    enroll(learner, CourseFactory(org=org))
    report(api, learner, activity)
    rows, total = my_courses(org=org, membership=learner.membership, page=Page(1, 20))
    assert listing(api, learner) == {
        "rows": [EnrolledCourseSerializer(row).data for row in rows],
        "total": total,
        "page": 1,
        "pageSize": 20,
    }


# --- cost --------------------------------------------------------------------------------------


@pytest.fixture
def many(api, org, learner):
    """Twelve enrolled courses of one to four activities, some reported on, one completed."""
    for n in range(12):
        course = CourseFactory(org=org)
        activities = with_activities(course, n % 4 + 1)
        enroll(learner, course, at=T0 + timedelta(minutes=n))
        for activity in activities[: n % 3]:
            report(api, learner, activity)


@pytest.mark.parametrize("size", [13, 100])
def test_a_page_that_is_not_full_is_one_query_after_the_token(
    api, learner, many, size, django_assert_num_queries
):
    with django_assert_num_queries(2):
        body = listing(api, learner, pageSize=size)
    assert (len(body["rows"]), body["total"]) == (12, 12)


@pytest.mark.parametrize("size", [1, 12])
def test_a_full_first_page_counts_in_a_second_query(
    api, learner, many, size, django_assert_num_queries
):
    with django_assert_num_queries(3):
        body = listing(api, learner, pageSize=size)
    assert (len(body["rows"]), body["total"]) == (size, 12)


@pytest.mark.parametrize("page, queries", [(2, 3), (3, 3), (4, 2), (9007199254740991, 2)])
def test_a_later_page_counts_then_reads_what_it_holds(
    api, learner, many, page, queries, django_assert_num_queries
):
    with django_assert_num_queries(queries):  # the token's, the count, the rows if any
        body = listing(api, learner, page=page, pageSize=5)
    assert (len(body["rows"]), body["total"]) == ({2: 5, 3: 2}.get(page, 0), 12)


def test_schema_documents_the_operation(api):
    schema = api.get("/api/schema/", query={"format": "json"}).json()
    operation = schema["paths"]["/api/learn/courses"]["get"]
    assert {"200", "400", "401"} <= set(operation["responses"])
    assert {p["name"] for p in operation["parameters"]} == {"page", "pageSize"}
    components = schema["components"]["schemas"]
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    envelope = components[ref.rsplit("/", 1)[1]]
    assert set(envelope["required"]) == {"rows", "total", "page", "pageSize"}
    row = components[envelope["properties"]["rows"]["items"]["$ref"].rsplit("/", 1)[1]]
    assert list(row["properties"]) == DECLARED
    assert set(row["properties"]) >= ROW_KEYS


@pytest.mark.postgres
def test_page_one_is_a_prepared_statement(api, org, learner):
    """Its plan does not depend on the values: PostgreSQL plans it once per connection."""
    enroll(learner, CourseFactory(org=org))
    for _ in range(3):
        assert len(listing(api, learner)["rows"]) == 1
    ((statement, runs),) = prepared_statements('%FROM "learn_enrollment"%ORDER BY%')
    assert runs == 3 and "$1" in statement and learner.membership.id.hex not in statement
