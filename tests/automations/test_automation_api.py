"""4.7 GET /api/automations/{id}: owner and admin only, the exact shape, tenant isolation."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from automations.models import Automation
from automations.serializers import ActionSerializer, AutomationSerializer
from tests.automations.factories import AutomationFactory, welcome_email
from tests.helpers import assert_error, assert_foreign_looks_missing
from tests.learn.factories import CourseFactory

pytestmark = pytest.mark.django_db
MISSING = "00000000-0000-7000-8000-000000000000"
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
# The token (membership, user and organization in one join), then the automation.
QUERIES = 2


def automation_url(automation_id) -> str:
    return f"/api/automations/{automation_id}"


@pytest.fixture
def automation(org):
    return AutomationFactory(
        org=org,
        name="Course completion",
        description="Congratulate, then tell the HR system.",
        trigger="course.completed",
        actions=[
            welcome_email(subject="Well done!"),
            {"type": "webhook", "input": {"url": "https://hr.example.com/hook", "method": "PUT"}},
            {"type": "enroll_in_course", "input": {"courseId": MISSING}},
        ],
        enabled=False,
    )


def test_owner_reads_the_automation_in_its_exact_shape(api, owner, automation):
    response = api.get(automation_url(automation.id), token=owner.token)
    assert response.status_code == 200
    body = response.json()
    assert body == {
        "orgId": str(automation.org_id),
        "id": str(automation.id),
        "name": "Course completion",
        "description": "Congratulate, then tell the HR system.",
        "trigger": "course.completed",
        "actions": [
            {
                "type": "send_email",
                "input": {"to": "learner", "subject": "Well done!", "body": "Glad to have you."},
            },
            {"type": "webhook", "input": {"url": "https://hr.example.com/hook", "method": "PUT"}},
            {"type": "enroll_in_course", "input": {"courseId": MISSING}},
        ],
        "conditions": {},
        "enabled": False,
        "createdAt": body["createdAt"],
        "updatedAt": body["updatedAt"],
    }
    assert ISO_Z.match(body["createdAt"]) and ISO_Z.match(body["updatedAt"])
    assert body["createdAt"] == automation.created_at.isoformat().replace("+00:00", "Z")


def test_admin_reads_it_too(api, admin_member, automation):
    response = api.get(automation_url(automation.id), token=admin_member.token)
    assert (response.status_code, response.json()["id"]) == (200, str(automation.id))


@pytest.mark.parametrize("role", ["instructor", "learner"])
def test_instructors_and_learners_may_not(api, automation, role, request):
    member = request.getfixturevalue(role)
    assert_error(
        api.get(automation_url(automation.id), token=member.token), 403, "permission_denied"
    )


def test_role_is_checked_before_existence(api, learner):
    assert_error(api.get(automation_url(MISSING), token=learner.token), 403, "permission_denied")


def test_without_a_token_it_is_401(api, automation):
    response = api.get(automation_url(automation.id))
    assert_error(response, 401, "unauthenticated")
    assert response["WWW-Authenticate"] == "Bearer"


def test_unknown_id_is_404(api, owner):
    assert_error(api.get(automation_url(MISSING), token=owner.token), 404, "not_found")


def test_another_organizations_automation_looks_missing(api, owner, other_org):
    foreign = AutomationFactory(org=other_org)
    assert_foreign_looks_missing(
        api, "GET", automation_url(foreign.id), automation_url(MISSING), token=owner.token
    )


@pytest.mark.parametrize("bad_id", ["not-a-uuid", "1", "%00", "..", "a" * 300, MISSING + "0"])
def test_malformed_id_is_404(api, owner, bad_id):
    assert_error(api.get(f"/api/automations/{bad_id}", token=owner.token), 404, "not_found")


def test_query_count_is_pinned_and_does_not_grow(api, owner, org, django_assert_num_queries):
    small = AutomationFactory(org=org, actions=[welcome_email()])
    with django_assert_num_queries(QUERIES):
        assert api.get(automation_url(small.id), token=owner.token).status_code == 200
    big = AutomationFactory(org=org, actions=[welcome_email(subject=f"#{n}") for n in range(20)])
    AutomationFactory.create_batch(20, org=org)
    with django_assert_num_queries(QUERIES):
        response = api.get(automation_url(big.id), token=owner.token)
    assert [a["input"]["subject"] for a in response.json()["actions"]] == [
        f"#{n}" for n in range(20)
    ]


def test_the_schema_documents_the_read(api):
    schema = api.get("/api/schema/", query={"format": "json"}).json()
    operation = schema["paths"]["/api/automations/{id}"]["get"]
    assert {"200", "401", "403", "404"} <= set(operation["responses"])
    assert operation["security"] == [{"bearerAuth": []}]
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    shape = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(shape["properties"]) == {
        "orgId",
        "id",
        "name",
        "description",
        "trigger",
        "actions",
        "conditions",
        "enabled",
        "createdAt",
        "updatedAt",
    }


@pytest.mark.parametrize("microseconds", [0, 7, 123456])
def test_the_answer_reads_as_the_automation_serializer_writes_it(
    api, owner, automation, microseconds
):
    """The read builds its body from column values (``AUTOMATION.body``); it must read as
    ``AutomationSerializer`` would, timestamps, nested inputs and non-ASCII included."""
    Automation.objects.for_org(automation.org).filter(id=automation.id).update(
        name="Zertifikat für Ünïcode ✓",
        conditions={"courseIds": [MISSING]},
        created_at=datetime(2026, 1, 2, 3, 4, 5, microseconds, tzinfo=UTC),
        actions=[
            {"type": "webhook", "input": {"url": "https://x.example/h", "headers": {"A": "1"}}},
            {"type": "send_email", "input": {"to": "learner", "subject": "", "body": "é\nb"}},
        ],
    )
    stored = Automation.objects.for_org(automation.org).get(id=automation.id)
    response = api.get(automation_url(automation.id), token=owner.token)
    assert response.status_code == 200
    assert response.json() == dict(AutomationSerializer(stored).data)


def test_actions_are_stored_as_the_action_serializer_answers_them(api, owner):
    """The body answers the stored actions as they are: validation stores each action as
    exactly ``{type, input}``, its ids lower-case (``registry.normalized_actions``), which
    is what ``ActionSerializer``, the schema's description of them, answers for it."""
    course = CourseFactory(org=owner.org)
    sent = [
        {"input": {"body": "é", "subject": "Hi", "to": "learner"}, "type": "send_email"},
        {"type": "enroll_in_course", "input": {"courseId": str(course.id).upper()}},
        {"type": "webhook", "input": {"headers": {"X-A": "1"}, "url": "https://x.example/h"}},
    ]
    body = {"name": "Stored", "trigger": "enrollment.created", "actions": sent}
    created = api.post("/api/automations", body, token=owner.token)
    assert created.status_code == 201
    stored = Automation.objects.for_org(owner.org).get(id=created.json()["id"]).actions
    assert stored == ActionSerializer(stored, many=True).data
    assert stored[1]["input"]["courseId"] == str(course.id)
    read = api.get(automation_url(created.json()["id"]), token=owner.token).json()
    assert read["actions"] == ActionSerializer(stored, many=True).data == created.json()["actions"]
