"""The learning part of seed_demo: the manifest's courses work against the API as
docs/demo.md says."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from learn.models import (
    Activity,
    Course,
    Enrollment,
    Module,
    Progress,
    ProgressReport,
)
from organizations.models import ApiToken, IdempotencyRecord, hash_token
from tests.helpers import ApiClient, assert_error

pytestmark = pytest.mark.django_db

RULES = {
    "view": {"type": "view"},
    "time": {"type": "time", "minSeconds": 60},
    "media": {"type": "media", "threshold": 0.9},
    "pages": {"type": "pages", "threshold": 1.0},
    "score": {"type": "score", "passingScore": 0.7},
    "reported": {"type": "reported"},
}


# Reports that complete each demo rule's activity.
FINISHING = {
    "view": [{"type": "complete"}],
    "time": [{"type": "time", "seconds": 60}],
    "media": [{"type": "media", "from": 0, "to": 600, "duration": 600}],
    "pages": [{"type": "page", "page": p, "pages": 10} for p in range(1, 11)],
    "score": [{"type": "score", "score": 7, "maxScore": 10}],
    "reported": [{"type": "complete"}],
}


def seed() -> dict:
    out = StringIO()
    call_command("seed_demo", "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


def activities_url(course_id: str) -> str:
    return f"/api/learn/courses/{course_id}/activities"


@pytest.mark.parametrize("key", ["org", "otherOrg"])
def test_manifest_courses_match_the_api(key):
    data = seed()[key]
    api, tokens = ApiClient(), data["tokens"]
    first, second = data["courses"]

    listed = api.get(activities_url(first["id"]), token=tokens["learner"])
    assert [a["id"] for a in listed.json()] == first["published"]
    assert not set(first["unpublished"]) & set(first["published"])
    assert len(first["unpublished"]) >= 2
    for activity_id in first["unpublished"]:
        body = {"activity": activity_id, "reports": []}
        assert_error(
            api.post("/api/learn/progress", body, token=tokens["learner"]), 404, "not_found"
        )

    assert set(first["rules"]) == set(RULES)
    for rule, activity_id in first["rules"].items():
        settings = Activity.all_orgs.get(id=activity_id).settings
        assert settings["completion"] == RULES[rule]
        assert activity_id in first["published"]
    assert Activity.all_orgs.get(id=first["rules"]["media"]).settings["duration"] > 0
    assert Activity.all_orgs.get(id=first["rules"]["pages"]).settings["pages"] >= 1

    assert_error(
        api.get(activities_url(first["id"]), token=tokens["outsider"]), 403, "not_enrolled"
    )
    assert (second["unpublished"], second["rules"]) == ([], {})
    assert second["published"]
    for role in ("learner", "outsider", "owner"):
        assert_error(api.get(activities_url(second["id"]), token=tokens[role]), 403, "not_enrolled")


def test_seeding_twice_keeps_one_data_set_and_empties_progress():
    first = seed()
    courses = first["org"]["courses"]
    api, token = ApiClient(), first["org"]["tokens"]["learner"]
    time_activity = courses[0]["rules"]["time"]
    api.post(
        "/api/learn/progress",
        {"activity": time_activity, "reports": [{"type": "time", "seconds": 30}]},
        token=token,
        headers={"Idempotency-Key": "demo"},
    )
    assert Progress.all_orgs.count() == ProgressReport.all_orgs.count() == 1
    counts = (Course.all_orgs.count(), Activity.all_orgs.count(), Enrollment.all_orgs.count())

    second = seed()
    assert second["org"]["courses"] == courses
    assert (
        Course.all_orgs.count(),
        Activity.all_orgs.count(),
        Enrollment.all_orgs.count(),
    ) == counts
    # The learner of each organization, in the first course and in the unpublished one.
    assert Enrollment.all_orgs.count() == 4
    assert not Progress.all_orgs.exists() and not ProgressReport.all_orgs.exists()
    assert not IdempotencyRecord.all_orgs.exists()

    token = second["org"]["tokens"]["learner"]
    again = api.post(
        "/api/learn/progress",
        {"activity": time_activity, "reports": [{"type": "time", "seconds": 30}]},
        token=token,
        headers={"Idempotency-Key": "demo"},
    )
    assert again.json() == {"status": "in-progress", "progress": 0.5, "remaining": {"seconds": 30}}


def test_each_demo_rule_can_be_completed():
    data = seed()["org"]
    api, token = ApiClient(), data["tokens"]["learner"]
    rules = data["courses"][0]["rules"]
    for rule, reports in FINISHING.items():
        response = api.post(
            "/api/learn/progress", {"activity": rules[rule], "reports": reports}, token=token
        )
        assert response.json() == {"status": "completed", "progress": 1.0, "remaining": None}, rule


@pytest.mark.parametrize("key", ["org", "otherOrg"])
def test_the_learner_is_enrolled_in_an_unpublished_course_no_list_shows(key):
    data = seed()[key]
    api, token = ApiClient(), data["tokens"]["learner"]
    draft = Course.all_orgs.get(id=data["unpublishedCourse"])
    assert not draft.published and str(draft.org_id) == data["id"]
    learner = ApiToken.all_orgs.get(key_hash=hash_token(token)).membership
    assert Enrollment.all_orgs.filter(course=draft, membership=learner).exists()
    listed = api.get("/api/learn/courses", token=token).json()
    assert [row["id"] for row in listed["rows"]] == [data["courses"][0]["id"]]
    for path in ("", "/activities", "/progress"):
        response = api.get(f"/api/learn/courses/{draft.id}{path}", token=token)
        assert_error(response, 404, "not_found")


def test_every_demo_course_module_and_activity_has_a_title():
    seed()
    for model in (Course, Module, Activity):
        assert model.all_orgs.exists()
        assert not model.all_orgs.filter(title="").exists(), model


def test_the_outline_of_the_first_course_shows_titles_and_what_remains():
    data = seed()["org"]
    api, token = ApiClient(), data["tokens"]["learner"]
    first = data["courses"][0]
    body = api.get(f"/api/learn/courses/{first['id']}", token=token).json()
    activities = [a for module in body["modules"] for a in module["activities"]]
    assert [a["id"] for a in activities] == first["published"]
    assert all(module["title"] for module in body["modules"])
    assert all(activity["title"] for activity in activities)
    remaining = {a["id"]: a["remaining"] for a in activities}
    assert [remaining[first["rules"][rule]] for rule in RULES] == [
        {"open": True},
        {"seconds": 60},
        {"seconds": 540},
        {"pages": 10},
        {"passingScore": 0.7, "best": None},
        {"report": "complete"},
    ]
