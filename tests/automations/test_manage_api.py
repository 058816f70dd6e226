"""7.1 /api/automations: list, create (signing secret once), partial update, delete, runs."""

from __future__ import annotations

import base64

import pytest

from automations import definition as definition_module
from automations.models import Automation, AutomationRun, AutomationRunAction
from tests.automations.factories import AutomationFactory, make_run, welcome_email
from tests.helpers import assert_error, make_member
from tests.learn.factories import CourseFactory

pytestmark = pytest.mark.django_db
URL = "/api/automations"
HOOK = {"type": "webhook", "input": {"url": "https://hr.example.com/hook"}}


def body(**changes) -> dict:
    return {
        "name": "Welcome",
        "trigger": "enrollment.created",
        "actions": [welcome_email(), HOOK],
        **changes,
    }


def test_creating_answers_the_automation_and_its_signing_secret_once(api, owner):
    created = api.post(URL, body(description="Hello"), token=owner.token)
    assert created.status_code == 201, created.content
    data = created.json()
    assert data["trigger"] == "enrollment.created" and data["enabled"] is True
    assert data["actions"] == [welcome_email(), HOOK] and data["description"] == "Hello"
    secret = data["signingSecret"]
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) == 32
    read = api.get(f"{URL}/{data['id']}", token=owner.token).json()
    assert "signingSecret" not in read and secret not in str(read)
    listed = api.get(URL, token=owner.token).json()
    assert secret not in str(listed)


@pytest.mark.parametrize(
    ("changes", "paths"),
    [
        ({"trigger": "nope"}, {"trigger"}),
        ({"trigger": 5}, {"trigger"}),
        ({"actions": [welcome_email(), {"type": "fax", "input": {}}]}, {"actions.1.type"}),
        (
            {"actions": [{"type": "webhook", "input": {"url": "ftp://x"}}]},
            {"actions.0.input.url"},
        ),
        ({"actions": "all"}, {"actions"}),
        ({"actions": [welcome_email(subject="Hi\x00")]}, {"actions.0.input.subject"}),
        ({"actions": [welcome_email(body="\x00")]}, {"actions.0.input.body"}),
        ({"actions": []}, {"actions"}),
        (
            {
                "actions": [
                    {
                        "type": "enroll_in_course",
                        "input": {"courseId": str(AutomationFactory._meta.model().id)},
                    }
                ]
            },
            {"actions.0.input.courseId"},
        ),
    ],
)
def test_an_invalid_definition_is_a_400_naming_each_path(api, owner, changes, paths):
    error = assert_error(api.post(URL, body(**changes), token=owner.token), 400, "validation_error")
    assert set(error["details"]) == paths
    assert not Automation.objects.for_org(owner.org).exists()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": 5}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"enabled": "true"}, "enabled"),
        ({"description": None}, "description"),
    ],
)
def test_bad_fields_are_a_400_naming_them(api, owner, changes, field):
    error = assert_error(api.post(URL, body(**changes), token=owner.token), 400, "validation_error")
    assert field in error["details"]


def test_a_missing_field_is_400_and_a_taken_name_409(api, owner):
    error = assert_error(api.post(URL, {"name": "x"}, token=owner.token), 400, "validation_error")
    assert {"trigger", "actions"} <= set(error["details"])
    assert api.post(URL, body(), token=owner.token).status_code == 201
    error = assert_error(api.post(URL, body(), token=owner.token), 409, "conflict")
    assert set(error["details"]) == {"name"}
    assert Automation.objects.for_org(owner.org).count() == 1


def test_the_definition_is_validated_once(api, owner, monkeypatch):
    calls = []
    real = definition_module.validate_automation
    monkeypatch.setattr(
        definition_module, "validate_automation", lambda *a: calls.append(a) or real(*a)
    )
    assert api.post(URL, body(), token=owner.token).status_code == 201
    assert len(calls) == 1


@pytest.mark.parametrize("role", ["instructor", "learner"])
def test_only_owners_and_admins_manage_automations(api, org, role):
    member = make_member(org, role)
    automation = AutomationFactory(org=org)
    for method, url, data in [
        ("GET", URL, None),
        ("POST", URL, body()),
        ("PATCH", f"{URL}/{automation.id}", {"enabled": False}),
        ("DELETE", f"{URL}/{automation.id}", None),
        ("GET", f"{URL}/{automation.id}/runs", None),
    ]:
        assert_error(api.request(method, url, data, token=member.token), 403, "permission_denied")
        assert_error(api.request(method, url, data), 401, "unauthenticated")


def test_the_list_is_the_organizations_newest_first_and_paged(
    api, admin_member, other_org, django_assert_num_queries
):
    mine = [AutomationFactory(org=admin_member.org) for _ in range(3)]
    AutomationFactory(org=other_org)
    with django_assert_num_queries(3):  # token, rows, count
        page = api.get(URL, token=admin_member.token, query={"pageSize": 2}).json()
    assert page["total"] == 3 and page["page"] == 1 and page["pageSize"] == 2
    assert [row["id"] for row in page["rows"]] == [str(a.id) for a in mine[::-1][:2]]
    error = api.get(URL, token=admin_member.token, query={"pageSize": 0})
    assert "pageSize" in assert_error(error, 400, "validation_error")["details"]


def test_patch_changes_only_what_is_sent(api, owner, django_assert_max_num_queries):
    automation = AutomationFactory(org=owner.org, trigger="course.completed")
    with django_assert_max_num_queries(9):
        changed = api.request(
            "PATCH", f"{URL}/{automation.id}", {"enabled": False}, token=owner.token
        )
    assert changed.status_code == 200, changed.content
    data = changed.json()
    assert data["enabled"] is False and data["trigger"] == "course.completed"
    assert data["name"] == automation.name and "signingSecret" not in data
    error = api.request(
        "PATCH",
        f"{URL}/{automation.id}",
        {
            "trigger": "invite.accepted",
            "actions": [HOOK, {"type": "send_email", "input": {"to": "inviter"}}],
        },
        token=owner.token,
    )
    details = assert_error(error, 400, "validation_error")["details"]
    assert set(details) == {"actions.1.input.subject", "actions.1.input.body"}
    # The trigger alone is checked with the stored actions: "inviter" only exists on invites.
    inviting = AutomationFactory(
        org=owner.org, trigger="invite.accepted", actions=[welcome_email(to="inviter")]
    )
    error = api.request(
        "PATCH", f"{URL}/{inviting.id}", {"trigger": "course.completed"}, token=owner.token
    )
    assert set(assert_error(error, 400, "validation_error")["details"]) == {"actions.0.input.to"}


def test_delete_removes_the_automation_and_its_runs(api, owner):
    automation = AutomationFactory(org=owner.org)
    make_run(automation)
    assert api.delete(f"{URL}/{automation.id}", token=owner.token).status_code == 204
    assert not AutomationRun.objects.for_org(owner.org).exists()
    assert_error(api.delete(f"{URL}/{automation.id}", token=owner.token), 404, "not_found")


def test_runs_are_listed_newest_first_in_their_shape(api, owner, django_assert_num_queries):
    automation = AutomationFactory(org=owner.org)
    older, newer = make_run(automation), make_run(automation, status="running", depth=1)
    make_run(AutomationFactory(org=owner.org))
    # token, the automation, the rows (with their revision's types), their actions' rows
    with django_assert_num_queries(4):
        page = api.get(f"{URL}/{automation.id}/runs", token=owner.token).json()
    assert page["total"] == 2
    assert [row["id"] for row in page["rows"]] == [str(newer.id), str(older.id)]
    row = page["rows"][1]
    assert row == {
        "id": str(older.id),
        "automationId": str(automation.id),
        "event": {
            "id": str(older.event_id),
            "type": "enrollment.created",
            "occurredAt": row["event"]["occurredAt"],
            "data": {"email": "a@example.com"},
        },
        "status": "pending",
        "depth": 0,
        "actions": [
            {
                "type": "send_email",
                "status": "pending",
                "attempts": 0,
                "lastError": None,
                "response": None,
            }
        ],
        "createdAt": row["createdAt"],
        "finishedAt": None,
    }


def test_an_enroll_action_names_a_course_of_the_organization(api, owner, other_org):
    mine, theirs = CourseFactory(org=owner.org), CourseFactory(org=other_org)
    enroll = [{"type": "enroll_in_course", "input": {"courseId": str(mine.id).upper()}}]
    assert api.post(URL, body(actions=enroll), token=owner.token).status_code == 201
    enroll = [{"type": "enroll_in_course", "input": {"courseId": str(theirs.id)}}]
    error = api.post(URL, body(name="Other", actions=enroll), token=owner.token)
    assert set(assert_error(error, 400, "validation_error")["details"]) == {
        "actions.0.input.courseId"
    }


def test_a_page_of_runs_shows_each_actions_outcome_in_constant_queries(
    api, owner, django_assert_num_queries
):
    actions = [welcome_email(), HOOK, welcome_email(subject="Bye")]
    automation = AutomationFactory(org=owner.org, actions=actions)
    response = {"status": 500, "durationMs": 12, "body": "x" * 1024}
    made = []
    for number in range(12):
        run = make_run(automation, status="running")
        AutomationRunAction.objects.create(
            org=owner.org, run=run, index=0, status="succeeded", attempts=1
        )
        AutomationRunAction.objects.create(
            org=owner.org,
            run=run,
            index=1,
            status="running",
            attempts=number % 3 + 1,
            last_error="The endpoint answered 500.",
            response=response,
        )
        made.append(run)
    for size in (1, 12):  # full pages: the total is counted too
        with django_assert_num_queries(5):
            page = api.get(
                f"{URL}/{automation.id}/runs", token=owner.token, query={"pageSize": size}
            ).json()
        assert len(page["rows"]) == size and page["total"] == 12
    assert [row["id"] for row in page["rows"]] == [str(r.id) for r in reversed(made)]
    assert page["rows"][0]["actions"] == [
        {
            "type": "send_email",
            "status": "succeeded",
            "attempts": 1,
            "lastError": None,
            "response": None,
        },
        {
            "type": "webhook",
            "status": "running",
            "attempts": 3,
            "lastError": "The endpoint answered 500.",
            "response": response,
        },
        {
            "type": "send_email",
            "status": "pending",
            "attempts": 0,
            "lastError": None,
            "response": None,
        },
    ]
