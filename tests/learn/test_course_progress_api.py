"""7.4 GET /api/learn/courses/{courseId}/progress: the caller's status and progress on a course
and on each activity 4.4 lists, as 4.3 answered them, before, during and after completion."""

import pytest

from learn.models import CourseCompletion, Progress
from tests.helpers import assert_error, make_member
from tests.learn.factories import ActivityFactory, CourseFactory, EnrollmentFactory, ModuleFactory
from tests.learn.progress import report

pytestmark = pytest.mark.django_db

MISSING = "00000000-0000-7000-8000-000000000000"
KEYS = {"courseId", "status", "progress", "completedAt", "activities"}


def progress_url(course) -> str:
    return f"/api/learn/courses/{getattr(course, 'id', course)}/progress"


def read(api, member, course) -> dict:
    response = api.get(progress_url(course), token=member.token)
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert set(body) == KEYS
    return body


def listed_ids(api, member, course) -> list[str]:
    return [
        a["id"]
        for a in api.get(f"/api/learn/courses/{course.id}/activities", token=member.token).json()
    ]


@pytest.fixture
def activities(course):
    """Three listed activities over two modules (created out of order), one of each kind of
    rule whose progress moves in steps, and two that are not listed."""
    second, first = ModuleFactory(course=course, seq=2), ModuleFactory(course=course, seq=1)
    quiz = ActivityFactory(
        module=second, seq=1, settings={"completion": {"type": "score", "passingScore": 0.7}}
    )
    reading = ActivityFactory(
        module=first,
        seq=2,
        settings={"completion": {"type": "pages", "threshold": 1.0}, "pages": 4},
    )
    timed = ActivityFactory(
        module=first,
        seq=1,
        settings={"completion": {"type": "time", "minSeconds": 60}},
    )
    ActivityFactory(module=first, seq=3, published=False)
    ActivityFactory(module=ModuleFactory(course=course, seq=3, published=False), seq=1)
    return [timed, reading, quiz]


def test_before_any_report_everything_is_not_started(api, enrolled, course, activities):
    body = read(api, enrolled, course)
    assert body == {
        "courseId": str(course.id),
        "status": "not-started",
        "progress": 0.0,
        "completedAt": None,
        "activities": [
            {"activity": str(a.id), "status": "not-started", "progress": 0.0, "remaining": left}
            for a, left in zip(
                activities,
                [{"seconds": 60}, {"pages": 4}, {"passingScore": 0.7, "best": None}],
                strict=True,
            )
        ],
    }
    assert [a["activity"] for a in body["activities"]] == listed_ids(api, enrolled, course)


def test_each_activity_reads_what_its_last_report_answered(api, enrolled, course, activities):
    timed, reading, quiz = activities
    answers = {}
    steps = [
        (timed, {"type": "time", "seconds": 20}),
        (reading, {"type": "page", "page": 1, "pages": 4}),
        (timed, {"type": "time", "seconds": 25}),
        (quiz, {"type": "score", "score": 5, "maxScore": 10}),
        (reading, {"type": "bookmark"}),
        (timed, {"type": "time", "seconds": 30}),
    ]
    for activity, sent in steps:
        answers[str(activity.id)] = report(api, enrolled, activity, sent)
        body = read(api, enrolled, course)
        for item in body["activities"]:
            # What 4.3 answered last, remaining included; not-started before any report.
            expected = answers.get(item["activity"], {"status": "not-started", "progress": 0.0})
            assert {key: item[key] for key in expected} == expected
        done = sum(a["status"] == "completed" for a in answers.values())
        assert (body["status"], body["progress"], body["completedAt"]) == (
            "in-progress",
            round(done / 3, 3),
            None,
        )
    assert answers[str(timed.id)] == {"status": "completed", "progress": 1.0, "remaining": None}
    assert read(api, enrolled, course)["progress"] == 0.333


def test_completing_the_last_activity_completes_the_course(api, enrolled, course, activities):
    timed, reading, quiz = activities
    report(api, enrolled, quiz, {"type": "score", "score": 9, "maxScore": 10})
    report(api, enrolled, timed, {"type": "time", "seconds": 60})
    assert read(api, enrolled, course)["status"] == "in-progress"

    pages = [{"type": "page", "page": n, "pages": 4} for n in (1, 2, 3, 4)]
    assert report(api, enrolled, reading, *pages) == {
        "status": "completed",
        "progress": 1.0,
        "remaining": None,
    }

    body = read(api, enrolled, course)
    completion = CourseCompletion.all_orgs.get(membership=enrolled.membership, course=course)
    last = Progress.all_orgs.get(membership=enrolled.membership, activity=reading)
    assert completion.completed_at == last.completed_at
    assert body["status"] == "completed" and body["progress"] == 1.0
    assert body["completedAt"] == completion.completed_at.isoformat().replace("+00:00", "Z")
    assert body["activities"] == [
        {"activity": str(a.id), "status": "completed", "progress": 1.0, "remaining": None}
        for a in activities
    ]


def test_completion_latches_when_staff_publish_another_activity(
    api, enrolled, course, activities, recorded_events
):
    complete_all(api, enrolled, activities)
    before = read(api, enrolled, course)
    assert before["status"] == "completed"

    reading = activities[1]
    extra = ActivityFactory(module=reading.module, seq=9)  # published later by staff
    after = read(api, enrolled, course)
    assert (after["status"], after["completedAt"]) == ("completed", before["completedAt"])
    assert after["progress"] == 0.75  # 3 of the 4 activities listed now
    assert after["activities"][-2] == {
        "activity": str(extra.id),
        "status": "not-started",
        "progress": 0.0,
        "remaining": {"open": True},
    }

    report(api, enrolled, extra, {"type": "complete"})
    final = read(api, enrolled, course)
    assert (final["status"], final["progress"], final["completedAt"]) == (
        "completed",
        1.0,
        before["completedAt"],
    )
    assert [e.type for e in recorded_events].count("course.completed") == 1


def test_unlisted_activities_neither_show_nor_count(api, enrolled, course, module):
    listed = ActivityFactory(module=module, seq=1)
    hidden = ActivityFactory(module=module, seq=2)
    report(api, enrolled, hidden)  # opened while published
    hidden.published = False
    hidden.save()
    body = read(api, enrolled, course)
    assert [a["activity"] for a in body["activities"]] == [str(listed.id)]
    assert body["status"] == "not-started"
    report(api, enrolled, listed, {"type": "complete"})
    assert read(api, enrolled, course)["status"] == "completed"


def test_a_course_without_listed_activities_is_not_started_and_never_completed(
    api, enrolled, course
):
    assert read(api, enrolled, course) == {
        "courseId": str(course.id),
        "status": "not-started",
        "progress": 0.0,
        "completedAt": None,
        "activities": [],
    }


def test_opening_an_activity_makes_the_course_in_progress(api, enrolled, course, activities):
    report(api, enrolled, activities[2])
    body = read(api, enrolled, course)
    assert (body["status"], body["progress"]) == ("in-progress", 0.0)
    assert body["activities"][2] == {
        "activity": str(activities[2].id),
        "status": "in-progress",
        "progress": 0.0,
        "remaining": {"passingScore": 0.7, "best": None},
    }


def test_progress_is_the_callers_own(api, enrolled, org, course, activities):
    report(api, enrolled, activities[0], {"type": "time", "seconds": 60})
    classmate = make_member(org)
    EnrollmentFactory(course=course, membership=classmate.membership)
    body = read(api, classmate, course)
    assert body["status"] == "not-started"
    assert {a["status"] for a in body["activities"]} == {"not-started"}


COMPLETING = {
    "time": [{"type": "time", "seconds": 60}],
    "pages": [{"type": "page", "page": n, "pages": 4} for n in (1, 2, 3, 4)],
    "score": [{"type": "score", "score": 7, "maxScore": 10}],
}


def complete_all(api, member, activities) -> None:
    for activity in activities:
        rule = activity.settings["completion"]["type"]
        assert report(api, member, activity, *COMPLETING[rule])["status"] == "completed"


# --- access, as for the listing (4.4) -------------------------------------------------------


def test_another_organizations_course_looks_missing(api, enrolled, other_org):
    theirs = CourseFactory(org=other_org)
    foreign = assert_error(api.get(progress_url(theirs), token=enrolled.token), 404, "not_found")
    missing = assert_error(api.get(progress_url(MISSING), token=enrolled.token), 404, "not_found")
    assert foreign["message"] == missing["message"]


def test_an_unpublished_course_is_404_even_when_enrolled(api, enrolled, course):
    course.published = False
    course.save()
    assert_error(api.get(progress_url(course), token=enrolled.token), 404, "not_found")


@pytest.mark.parametrize("bad", ["not-a-uuid", "123", "0193b3d6a4c87f1e9d2b3c4d5e6f7a8b"])
def test_a_malformed_course_id_is_404(api, enrolled, bad):
    assert_error(
        api.get(f"/api/learn/courses/{bad}/progress", token=enrolled.token), 404, "not_found"
    )


def test_a_member_not_enrolled_is_403_not_enrolled(api, owner, course):
    assert_error(api.get(progress_url(course), token=owner.token), 403, "not_enrolled")


def test_without_a_token_is_401(api, course):
    response = api.get(progress_url(course))
    assert_error(response, 401, "unauthenticated")
    assert response["WWW-Authenticate"] == "Bearer"


def test_post_is_405(api, enrolled, course):
    assert_error(
        api.post(progress_url(course), {}, token=enrolled.token), 405, "method_not_allowed"
    )


# --- cost -------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [5, 50])
def test_query_count_does_not_grow_with_the_activities(
    api, enrolled, course, count, django_assert_num_queries
):
    modules = [ModuleFactory(course=course, seq=n) for n in (1, 2)]
    activities = [ActivityFactory(module=modules[n % 2], seq=n + 1) for n in range(count)]
    for activity in activities[::2]:
        report(api, enrolled, activity, {"type": "bookmark"})
    # token, course (with enrollment and completion), activities with the caller's progress.
    with django_assert_num_queries(3):
        body = read(api, enrolled, course)
    assert len(body["activities"]) == count


def test_schema_documents_the_operation(api):
    schema = api.get("/api/schema/", query={"format": "json"}).json()
    operation = schema["paths"]["/api/learn/courses/{courseId}/progress"]["get"]
    assert {"200", "401", "403", "404"} <= set(operation["responses"])
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert set(schema["components"]["schemas"][ref.rsplit("/", 1)[1]]["properties"]) == KEYS
