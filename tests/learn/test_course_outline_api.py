"""8.2 GET /api/learn/courses/{courseId}: a course's published modules and activities with the
caller's status, progress and what remains of each; access as for 4.4."""

from datetime import UTC, datetime

import pytest

from learn.models import CourseCompletion
from learn.serializers import CourseOutlineSerializer
from learn.wire_reads import course_outline
from tests.helpers import (
    assert_error,
    assert_foreign_looks_missing,
    make_member,
    prepared_statements,
)
from tests.learn.factories import ActivityFactory, CourseFactory, EnrollmentFactory, ModuleFactory
from tests.learn.progress import report

pytestmark = pytest.mark.django_db

MISSING = "00000000-0000-7000-8000-000000000000"
# The contract's keys (8.2), each answered; the answer holds exactly its serializer's fields.
KEYS = {"id", "orgId", "title", "status", "progress", "completedAt", "modules"}
MODULE_KEYS = {"id", "seq", "title", "activities"}
ACTIVITY_KEYS = {"id", "seq", "title", "settings", "status", "progress", "remaining"}
DECLARED = CourseOutlineSerializer().fields
MODULE_DECLARED = DECLARED["modules"].child.fields
ACTIVITY_DECLARED = MODULE_DECLARED["activities"].child.fields
TIME = {"completion": {"type": "time", "minSeconds": 60}}
PAGES = {"completion": {"type": "pages", "threshold": 1.0}, "pages": 4}


def url(course) -> str:
    return f"/api/learn/courses/{getattr(course, 'id', course)}"


def outline(api, member, course) -> dict:
    response = api.get(url(course), token=member.token)
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert list(body) == list(DECLARED)
    assert set(body) >= KEYS
    for module in body["modules"]:
        assert list(module) == list(MODULE_DECLARED)
        assert set(module) >= MODULE_KEYS
        for activity in module["activities"]:
            assert list(activity) == list(ACTIVITY_DECLARED)
            assert set(activity) >= ACTIVITY_KEYS
    return body


def activities_of(body) -> list[dict]:
    return [activity for module in body["modules"] for activity in module["activities"]]


@pytest.fixture
def parts(course):
    """Two published modules (created out of order), an empty published one, an unpublished
    one; published and unpublished activities in each."""
    second = ModuleFactory(course=course, seq=2, title="Practice")
    first = ModuleFactory(course=course, seq=1, title="Basics")
    empty = ModuleFactory(course=course, seq=3, title="Coming next")
    hidden = ModuleFactory(course=course, seq=4, published=False)
    quiz = ActivityFactory(
        module=second,
        seq=1,
        title="Quiz",
        settings={"completion": {"type": "score", "passingScore": 0.7}},
    )
    reading = ActivityFactory(module=first, seq=2, title="Reading", settings=PAGES)
    timed = ActivityFactory(module=first, seq=1, title="", settings=TIME)
    ActivityFactory(module=first, seq=3, published=False)
    ActivityFactory(module=hidden, seq=1)
    return {"modules": [first, second, empty], "activities": [timed, reading, quiz]}


def test_published_modules_by_seq_each_with_its_published_activities(api, enrolled, course, parts):
    body = outline(api, enrolled, course)
    first, second, empty = parts["modules"]
    timed, reading, quiz = parts["activities"]
    assert (body["id"], body["orgId"], body["title"]) == (
        str(course.id),
        str(course.org_id),
        "Python from scratch",
    )
    assert [(m["id"], m["seq"], m["title"]) for m in body["modules"]] == [
        (str(first.id), 1, "Basics"),
        (str(second.id), 2, "Practice"),
        (str(empty.id), 3, "Coming next"),
    ]
    assert [[a["id"] for a in m["activities"]] for m in body["modules"]] == [
        [str(timed.id), str(reading.id)],
        [str(quiz.id)],
        [],
    ]
    assert [(a["seq"], a["title"], a["settings"]) for a in activities_of(body)] == [
        (1, "", TIME),
        (2, "Reading", PAGES),
        (1, "Quiz", {"completion": {"type": "score", "passingScore": 0.7}}),
    ]


def test_the_activities_are_exactly_those_the_listing_shows_in_its_order(
    api, enrolled, course, parts
):
    listed = api.get(f"{url(course)}/activities", token=enrolled.token).json()
    body = outline(api, enrolled, course)
    assert [a["id"] for a in activities_of(body)] == [a["id"] for a in listed]
    assert [(a["title"], a["settings"]) for a in activities_of(body)] == [
        (a["title"], a["settings"]) for a in listed
    ]


def test_before_any_report_everything_is_not_started_and_the_whole_rule_remains(
    api, enrolled, course, parts
):
    body = outline(api, enrolled, course)
    assert (body["status"], body["progress"], body["completedAt"]) == ("not-started", 0.0, None)
    assert [(a["status"], a["progress"], a["remaining"]) for a in activities_of(body)] == [
        ("not-started", 0.0, {"seconds": 60}),
        ("not-started", 0.0, {"pages": 4}),
        ("not-started", 0.0, {"passingScore": 0.7, "best": None}),
    ]


def test_each_activity_reads_what_the_last_report_answered(api, enrolled, course, parts):
    timed, reading, quiz = parts["activities"]
    answers = {
        str(timed.id): report(api, enrolled, timed, {"type": "time", "seconds": 20}),
        str(reading.id): report(
            api, enrolled, reading, *[{"type": "page", "page": p, "pages": 4} for p in (1, 2, 3, 4)]
        ),
        str(quiz.id): report(api, enrolled, quiz, {"type": "score", "score": 5, "maxScore": 10}),
    }
    body = outline(api, enrolled, course)
    for activity in activities_of(body):
        answer = answers[activity["id"]]
        assert {key: activity[key] for key in answer} == answer
    assert answers[str(reading.id)]["remaining"] is None
    assert answers[str(quiz.id)]["remaining"] == {"passingScore": 0.7, "best": 0.5}
    progress = api.get(f"{url(course)}/progress", token=enrolled.token).json()
    assert (body["status"], body["progress"], body["completedAt"]) == (
        progress["status"],
        progress["progress"],
        progress["completedAt"],
    )
    assert (body["status"], body["progress"]) == ("in-progress", 0.333)


def test_a_completed_course_reads_as_its_progress_does(api, enrolled, course, parts):
    timed, reading, quiz = parts["activities"]
    report(api, enrolled, timed, {"type": "time", "seconds": 60})
    report(api, enrolled, reading, *[{"type": "page", "page": p, "pages": 4} for p in range(1, 5)])
    report(api, enrolled, quiz, {"type": "score", "score": 7, "maxScore": 10})
    body = outline(api, enrolled, course)
    completion = CourseCompletion.all_orgs.get(membership=enrolled.membership, course=course)
    assert body["status"] == "completed" and body["progress"] == 1.0
    assert body["completedAt"] == completion.completed_at.isoformat().replace("+00:00", "Z")
    assert {(a["status"], a["progress"], a["remaining"]) for a in activities_of(body)} == {
        ("completed", 1.0, None)
    }


def test_the_completion_time_is_written_as_the_api_writes_times(api, enrolled, course, parts):
    CourseCompletion.all_orgs.create(
        org=course.org,
        membership=enrolled.membership,
        course=course,
        completed_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        position=1,
    )
    assert outline(api, enrolled, course)["completedAt"] == "2026-01-02T03:04:05Z"


def test_opening_an_activity_makes_the_course_in_progress(api, enrolled, course, parts):
    quiz = parts["activities"][2]
    report(api, enrolled, quiz)
    body = outline(api, enrolled, course)
    assert (body["status"], body["progress"]) == ("in-progress", 0.0)
    assert activities_of(body)[2]["status"] == "in-progress"


def test_progress_is_the_callers_own(api, enrolled, org, course, parts):
    report(api, enrolled, parts["activities"][0], {"type": "time", "seconds": 60})
    classmate = make_member(org)
    EnrollmentFactory(course=course, membership=classmate.membership)
    body = outline(api, classmate, course)
    assert body["status"] == "not-started"
    assert {a["status"] for a in activities_of(body)} == {"not-started"}


def test_a_course_without_published_modules_has_an_empty_outline(api, enrolled, course):
    ModuleFactory(course=course, seq=1, published=False)
    body = outline(api, enrolled, course)
    assert body["modules"] == []
    assert (body["status"], body["progress"], body["completedAt"]) == ("not-started", 0.0, None)


def test_the_body_is_what_the_outline_serializer_writes(api, enrolled, course, parts):
    """The view builds the body without a serializer; it must read as the schema's one."""
    report(api, enrolled, parts["activities"][0], {"type": "time", "seconds": 20})
    expected = CourseOutlineSerializer(
        course_outline(org=course.org, membership=enrolled.membership, course_id=course.id)
    ).data
    assert outline(api, enrolled, course) == expected


# --- access, as for 4.4 ------------------------------------------------------------------------


def test_another_organizations_course_looks_missing(api, enrolled, course, other_org):
    foreign = CourseFactory(org=other_org)
    ActivityFactory(module=ModuleFactory(course=foreign))
    assert_foreign_looks_missing(api, "GET", url(foreign), url(MISSING), token=enrolled.token)
    assert outline(api, enrolled, course)["id"] == str(course.id)  # the caller's own: 200


def test_an_unpublished_course_is_404_even_when_enrolled(api, enrolled, course, parts):
    assert outline(api, enrolled, course)["id"] == str(course.id)
    course.published = False
    course.save()
    assert_error(api.get(url(course), token=enrolled.token), 404, "not_found")


@pytest.mark.parametrize("bad", ["not-a-uuid", "123", "0193b3d6a4c87f1e9d2b3c4d5e6f7a8b"])
def test_a_malformed_course_id_is_404_as_a_missing_course(api, enrolled, bad):
    """Not an unknown route: the same answer as a well-formed id of no course."""
    malformed = api.get(f"/api/learn/courses/{bad}", token=enrolled.token)
    missing = api.get(url(MISSING), token=enrolled.token)
    body = assert_error(malformed, 404, "not_found")
    assert body["message"] == assert_error(missing, 404, "not_found")["message"]
    assert body["message"] == "No course with that id."


@pytest.mark.parametrize("with_parts", [True, False])
def test_a_member_not_enrolled_is_403_not_enrolled(api, owner, course, module, with_parts):
    if with_parts:
        ActivityFactory(module=module)
    assert_error(api.get(url(course), token=owner.token), 403, "not_enrolled")


def test_without_a_token_is_401(api, course):
    response = api.get(url(course))
    assert_error(response, 401, "unauthenticated")
    assert response["WWW-Authenticate"] == "Bearer"


def test_an_unknown_token_is_401_before_the_course_is_looked_at(api):
    assert_error(api.get(url(MISSING), token="lms_unknown"), 401, "unauthenticated")


def test_post_is_405(api, enrolled, course):
    assert_error(api.post(url(course), {}, token=enrolled.token), 405, "method_not_allowed")


# --- cost --------------------------------------------------------------------------------------


@pytest.mark.parametrize("modules, per_module", [(1, 1), (3, 2), (8, 12)])
def test_one_query_after_the_token_whatever_the_numbers(
    api, enrolled, course, modules, per_module, django_assert_num_queries
):
    activities = []
    for m in range(modules):
        module = ModuleFactory(course=course, seq=m + 1)
        activities += [ActivityFactory(module=module, seq=a + 1) for a in range(per_module)]
    for activity in activities[::2]:
        report(api, enrolled, activity, {"type": "bookmark"})
    # token, then the modules with their activities, the caller's progress and the course.
    with django_assert_num_queries(2):
        body = outline(api, enrolled, course)
    assert len(activities_of(body)) == modules * per_module


def test_a_course_without_a_published_module_reads_its_head_in_a_second_query(
    api, enrolled, course, django_assert_num_queries
):
    with django_assert_num_queries(3):
        assert outline(api, enrolled, course)["modules"] == []


def test_schema_documents_the_operation(api):
    schema = api.get("/api/schema/", query={"format": "json"}).json()
    operation = schema["paths"]["/api/learn/courses/{courseId}"]["get"]
    assert {"200", "401", "403", "404"} <= set(operation["responses"])
    components = schema["components"]["schemas"]

    def component(ref: str) -> dict:
        return components[ref.rsplit("/", 1)[1]]

    body = component(operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"])
    assert list(body["properties"]) == list(DECLARED)
    assert set(body["properties"]) >= KEYS
    module = component(body["properties"]["modules"]["items"]["$ref"])
    assert list(module["properties"]) == list(MODULE_DECLARED)
    assert set(module["properties"]) >= MODULE_KEYS
    activity = component(module["properties"]["activities"]["items"]["$ref"])
    assert list(activity["properties"]) == list(ACTIVITY_DECLARED)
    assert set(activity["properties"]) >= ACTIVITY_KEYS
    remaining = activity["properties"]["remaining"]["allOf"][0]["$ref"]
    assert len(component(remaining)["oneOf"]) == 6


@pytest.mark.postgres
def test_the_outline_is_a_prepared_statement(api, enrolled, course, parts):
    for _ in range(3):
        outline(api, enrolled, course)
    ((statement, runs),) = prepared_statements('%FROM "learn_module"%')
    assert runs == 3 and "$1" in statement and course.id.hex not in statement
