"""CONTRACT 8.7: an automation aimed at some courses or activities (`conditions`), validated
against the organization and the trigger, answered on every read, and matched in the one
query that finds an event's automations."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from automations.models import Automation, AutomationRun
from learn.services import enroll
from tests.automations.factories import AutomationFactory, welcome_email
from tests.helpers import assert_error, make_member
from tests.learn.factories import ActivityFactory, CourseFactory

pytestmark = pytest.mark.django_db
URL = "/api/automations"


def body(trigger: str = "enrollment.created", **changes) -> dict:
    return {"name": "Aimed", "trigger": trigger, "actions": [welcome_email()], **changes}


def create(api, owner, **changes) -> dict:
    created = api.post(URL, body(**changes), token=owner.token)
    assert created.status_code == 201, created.content
    return created.json()


def complete(api, member, activity) -> None:
    data = {"activity": str(activity.id), "reports": [{"type": "complete"}]}
    answer = api.post("/api/learn/progress", data, token=member.token)
    assert answer.status_code == 200, answer.content


def test_conditions_default_to_none_and_are_answered_on_every_read(api, owner):
    plain = create(api, owner)
    assert plain["conditions"] == {}
    course = CourseFactory(org=owner.org)
    activity = ActivityFactory(org=owner.org, module__course=course)
    aimed = create(
        api,
        owner,
        name="Aimed 2",
        trigger="activity.completed",
        conditions={
            "activityIds": [str(activity.id).upper()],
            "courseIds": [str(course.id).upper(), str(course.id)],
        },
    )
    expected = {"courseIds": [str(course.id)], "activityIds": [str(activity.id)]}
    assert aimed["conditions"] == expected
    read = api.get(f"{URL}/{aimed['id']}", token=owner.token).json()
    assert read["conditions"] == expected
    listed = api.get(URL, token=owner.token).json()["rows"]
    assert {row["id"]: row["conditions"] for row in listed} == {
        aimed["id"]: expected,
        plain["id"]: {},
    }


def test_ids_of_another_organization_are_400_naming_each(api, owner, other_org):
    mine, theirs = CourseFactory(org=owner.org), CourseFactory(org=other_org)
    their_activity = ActivityFactory(org=other_org, module__course=theirs)
    conditions = {
        "courseIds": [str(theirs.id), str(mine.id)],
        "activityIds": [str(their_activity.id)],
    }
    answer = api.post(URL, body("activity.completed", conditions=conditions), token=owner.token)
    details = assert_error(answer, 400, "validation_error")["details"]
    assert set(details) == {"conditions.courseIds.0", "conditions.activityIds.0"}
    missing = {"courseIds": [str(mine.id), "01900000-0000-7000-8000-000000000000"]}
    answer = api.post(URL, body(conditions=missing), token=owner.token)
    assert set(assert_error(answer, 400, "validation_error")["details"]) == {
        "conditions.courseIds.1"
    }
    assert not Automation.objects.for_org(owner.org).exists()


@pytest.mark.parametrize(
    ("trigger", "conditions", "paths"),
    [
        ("course.completed", {"activityIds": ["ACTIVITY"]}, {"conditions.activityIds"}),
        ("enrollment.created", {"activityIds": ["ACTIVITY"]}, {"conditions.activityIds"}),
        ("invite.accepted", {"courseIds": ["COURSE"]}, {"conditions.courseIds"}),
        ("course.completed", {"lessonIds": ["COURSE"]}, {"conditions.lessonIds"}),
        ("course.completed", ["COURSE"], {"conditions"}),
        ("course.completed", "COURSE", {"conditions"}),
        ("course.completed", None, {"conditions"}),
        ("course.completed", {"courseIds": "COURSE"}, {"conditions.courseIds"}),
        ("course.completed", {"courseIds": []}, {"conditions.courseIds"}),
        ("course.completed", {"courseIds": ["not-an-id", "COURSE"]}, {"conditions.courseIds.0"}),
    ],
)
def test_a_condition_the_trigger_cannot_use_or_of_the_wrong_shape_is_400(
    api, owner, trigger, conditions, paths
):
    course = CourseFactory(org=owner.org)
    activity = ActivityFactory(org=owner.org, module__course=course)

    def fill(value):
        if isinstance(value, dict):
            return {key: fill(item) for key, item in value.items()}
        if isinstance(value, list):
            return [fill(item) for item in value]
        return {"COURSE": str(course.id), "ACTIVITY": str(activity.id)}.get(value, value)

    answer = api.post(URL, body(trigger, conditions=fill(conditions)), token=owner.token)
    assert set(assert_error(answer, 400, "validation_error")["details"]) == paths
    assert not Automation.objects.for_org(owner.org).exists()


def test_a_patch_with_conditions_replaces_them_and_a_new_trigger_is_checked_against_them(
    api, owner
):
    first, second = CourseFactory(org=owner.org), CourseFactory(org=owner.org)
    activity = ActivityFactory(org=owner.org, module__course=first)
    created = create(
        api,
        owner,
        trigger="activity.completed",
        conditions={"courseIds": [str(first.id)], "activityIds": [str(activity.id)]},
    )
    url = f"{URL}/{created['id']}"
    changed = api.request(
        "PATCH", url, {"conditions": {"courseIds": [str(second.id)]}}, token=owner.token
    )
    assert changed.status_code == 200, changed.content
    assert changed.json()["conditions"] == {"courseIds": [str(second.id)]}
    assert api.get(url, token=owner.token).json()["conditions"] == {"courseIds": [str(second.id)]}
    # A PATCH without conditions keeps them; a new trigger must be able to use them.
    assert api.request("PATCH", url, {"enabled": False}, token=owner.token).json()[
        "conditions"
    ] == {"courseIds": [str(second.id)]}
    refused = api.request("PATCH", url, {"trigger": "invite.accepted"}, token=owner.token)
    assert set(assert_error(refused, 400, "validation_error")["details"]) == {
        "conditions.courseIds"
    }
    cleared = api.request("PATCH", url, {"conditions": {}}, token=owner.token)
    assert cleared.json()["conditions"] == {}


def test_the_models_validation_refuses_what_the_api_refuses(org, other_org):
    """The admin saves through the model's validation (full_clean): the same checks."""
    theirs = CourseFactory(org=other_org)
    automation = Automation(
        org=org,
        name="Aimed",
        trigger="course.completed",
        actions=[welcome_email()],
        conditions={"courseIds": [str(theirs.id)]},
    )
    with pytest.raises(ValidationError) as refused:
        automation.full_clean()
    assert set(refused.value.message_dict) == {"conditions"}
    automation.conditions = {"activityIds": [str(theirs.id)]}
    with pytest.raises(ValidationError) as refused:
        automation.full_clean()
    assert "cannot be limited by activityIds" in str(refused.value.message_dict["conditions"])
    mine = CourseFactory(org=org)
    automation.conditions = {"courseIds": [str(mine.id).upper()]}
    automation.full_clean()
    assert automation.definition.conditions == {"courseIds": [str(mine.id)]}


def test_an_event_runs_only_the_automations_whose_conditions_it_meets(api, owner):
    org = owner.org
    course, other = CourseFactory(org=org), CourseFactory(org=org)
    first = ActivityFactory(org=org, module__course=course)
    second = ActivityFactory(org=org, module=first.module)
    elsewhere = ActivityFactory(org=org, module__course=other)
    ids = {
        "any": create(api, owner, name="any", trigger="activity.completed")["id"],
        "course": create(
            api,
            owner,
            name="course",
            trigger="activity.completed",
            conditions={"courseIds": [str(other.id), str(course.id)]},
        )["id"],
        "first": create(
            api,
            owner,
            name="first",
            trigger="activity.completed",
            conditions={"activityIds": [str(first.id)]},
        )["id"],
        "both": create(
            api,
            owner,
            name="both",
            trigger="activity.completed",
            conditions={"courseIds": [str(other.id)], "activityIds": [str(first.id)]},
        )["id"],
        "enrolled": create(api, owner, name="enrolled", conditions={"courseIds": [str(course.id)]})[
            "id"
        ],
        "enrolled elsewhere": create(
            api, owner, name="enrolled elsewhere", conditions={"courseIds": [str(other.id)]}
        )["id"],
    }
    names = {value: key for key, value in ids.items()}
    learner = make_member(org)
    enroll(membership=learner.membership, course=course)

    def ran() -> list[str]:
        runs = AutomationRun.objects.for_org(org).order_by("created_at", "id")
        found = sorted(names[str(run.automation_id)] for run in runs)
        AutomationRun.objects.for_org(org).delete()
        return found

    assert ran() == ["enrolled"]
    complete(api, learner, first)
    assert ran() == ["any", "course", "first"]
    complete(api, learner, second)
    assert ran() == ["any", "course"]
    enroll(membership=learner.membership, course=other)
    assert ran() == ["enrolled elsewhere"]
    complete(api, learner, elsewhere)
    assert ran() == ["any", "course"]


def test_a_course_completion_runs_only_the_automations_of_that_course(api, owner):
    org = owner.org
    course, other = CourseFactory(org=org), CourseFactory(org=org)
    activity = ActivityFactory(org=org, module__course=course)
    mine = create(
        api, owner, trigger="course.completed", conditions={"courseIds": [str(course.id)]}
    )
    create(
        api,
        owner,
        name="Other course",
        trigger="course.completed",
        conditions={"courseIds": [str(other.id)]},
    )
    learner = make_member(org)
    enroll(membership=learner.membership, course=course)
    AutomationRun.objects.for_org(org).delete()
    complete(api, learner, activity)
    (run,) = AutomationRun.objects.for_org(org)
    assert str(run.automation_id) == mine["id"] and run.event_data["courseId"] == str(course.id)


@pytest.mark.parametrize("trigger", ["activity.completed", "enrollment.created"])
def test_finding_the_automations_is_one_query_whatever_their_conditions(api, owner, trigger):
    """The same queries with 0, 1 and 6 course ids in the conditions of each of three
    automations (and one that the event does not meet): the conditions are matched by the
    one query that finds the automations."""
    org = owner.org
    courses = [CourseFactory(org=org) for _ in range(7)]
    counts = {}
    for number in (0, 1, 6):
        Automation.objects.for_org(org).delete()
        aimed = {"courseIds": [str(c.id) for c in courses[:number]]} if number else {}
        for _ in range(3):
            AutomationFactory(org=org, trigger=trigger, conditions=aimed)
        AutomationFactory(org=org, trigger=trigger, conditions={"courseIds": [str(courses[6].id)]})
        learner = make_member(org)
        activity = ActivityFactory(org=org, module__course=courses[0])
        ActivityFactory(org=org, module=activity.module)  # the course is not completed
        if trigger == "activity.completed":
            enroll(membership=learner.membership, course=courses[0])
            with CaptureQueriesContext(connection) as captured:
                complete(api, learner, activity)
        else:
            with CaptureQueriesContext(connection) as captured:
                enroll(membership=learner.membership, course=courses[0])
        finds = [
            q["sql"]
            for q in captured.captured_queries
            if 'FROM "automations_automation"' in q["sql"]
        ]
        assert len(finds) == 1, finds
        assert AutomationRun.objects.for_org(org).filter(trigger=trigger).count() == 3
        AutomationRun.objects.for_org(org).delete()
        counts[number] = len(captured)
    assert counts[0] == counts[1] == counts[6], counts
