"""A write's body in the schema takes only the conditions its trigger takes: one shape per
trigger, derived from the registry, so that a body the schema accepts is one the server
accepts, and a condition key the trigger cannot use is refused by both (CONTRACT 8.7)."""

from __future__ import annotations

import itertools

import pytest
from django.test import Client
from jsonschema import Draft7Validator

from automations.registry import CONDITIONS, TRIGGERS
from tests.automations.factories import AutomationFactory, welcome_email
from tests.automations.test_schema_for_clients import body_shapes, resolve
from tests.helpers import assert_error
from tests.learn.factories import ActivityFactory, CourseFactory

pytestmark = pytest.mark.django_db

# (path, method, the component that is the body's schema): a create names its trigger, a
# change may leave it out.
WRITES = [
    ("/api/automations", "post", "AutomationWriteRequest"),
    ("/api/automations/{id}", "patch", "PatchedAutomationWriteRequest"),
]
# Every set of condition keys, each trigger's and every other.
KEY_SETS = [
    keys for size in range(len(CONDITIONS) + 1) for keys in itertools.combinations(CONDITIONS, size)
]


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        return Client().get("/api/schema/", {"format": "json"}).json()


def shapes(schema: dict, path: str, method: str) -> dict[str, dict]:
    """The body's shape of each trigger, by the one value its ``trigger`` takes."""
    found = {}
    for shape in body_shapes(schema, path, method):
        trigger = shape["properties"]["trigger"]
        trigger = resolve(schema, trigger["allOf"][0]) if "allOf" in trigger else trigger
        assert len(trigger["enum"]) == 1, trigger
        found[trigger["enum"][0]] = shape
    return found


def validator(schema: dict, component: str) -> Draft7Validator:
    """The body's schema as JSON Schema, its references resolved in the whole document, its
    formats checked (an e-mail address has an "@")."""
    root = {"$ref": f"#/components/schemas/{component}", "components": schema["components"]}
    return Draft7Validator(root, format_checker=Draft7Validator.FORMAT_CHECKER)


@pytest.mark.parametrize(("path", "method", "component"), WRITES)
def test_each_trigger_has_a_shape_with_exactly_its_conditions(schema, path, method, component):
    found = shapes(schema, path, method)
    assert {name: set(shape["properties"]["conditions"]["properties"])
            for name, shape in found.items()} == {
        name: set(trigger.conditions) for name, trigger in TRIGGERS.items()
    }  # fmt: skip
    assert all(
        shape["properties"]["conditions"]["additionalProperties"] is False
        for shape in found.values()
    )
    union = schema["components"]["schemas"][component]
    # A create's body is required (each shape requires fields); a change's is not.
    assert schema["paths"][path][method]["requestBody"].get("required", False) == (method == "post")
    if method == "post":
        assert union["discriminator"]["propertyName"] == "trigger"
        assert set(union["discriminator"]["mapping"]) == set(TRIGGERS)
        assert all("trigger" in shape["required"] for shape in found.values())
    else:
        # A change may keep the stored trigger: no shape requires it.
        assert not any("trigger" in shape.get("required", []) for shape in found.values())


@pytest.fixture
def condition_ids(owner) -> dict[str, str]:
    """An id of the caller's organization for each condition key (by the model it names)."""
    course = CourseFactory(org=owner.org)
    activity = ActivityFactory(org=owner.org, module__course=course)
    records = {"learn.Course": course, "learn.Activity": activity}
    return {key: str(records[condition.model].id) for key, condition in CONDITIONS.items()}


def send(api, owner, method: str, body: dict):
    if method == "post":
        return api.post("/api/automations", body, token=owner.token)
    # A change of another trigger's automation: the trigger sent is the one judged.
    automation = AutomationFactory(org=owner.org, trigger="invite.accepted")
    return api.request("PATCH", f"/api/automations/{automation.id}", body, token=owner.token)


@pytest.mark.parametrize(("path", "method", "component"), WRITES)
@pytest.mark.parametrize("trigger", list(TRIGGERS))
def test_a_body_the_schema_accepts_is_accepted_and_one_it_refuses_is_refused(
    api, owner, schema, condition_ids, path, method, component, trigger
):
    check = validator(schema, component)
    taken = set(TRIGGERS[trigger].conditions)
    for number, keys in enumerate(KEY_SETS):
        body = {
            "name": f"Aimed {number}",
            "trigger": trigger,
            "actions": [welcome_email()],
            "conditions": {key: [condition_ids[key]] for key in keys},
        }
        valid = check.is_valid(body)
        answer = send(api, owner, method, body)
        assert valid == (set(keys) <= taken), (keys, list(check.iter_errors(body)))
        if valid:
            assert answer.status_code == (201 if method == "post" else 200), answer.content
            assert set(answer.json()["conditions"]) == set(keys)
        else:
            refused = assert_error(answer, 400, "validation_error")
            assert set(refused["details"]) == {f"conditions.{key}" for key in set(keys) - taken}


@pytest.mark.parametrize(("path", "method", "component"), WRITES)
def test_each_triggers_send_email_addresses_only_the_roles_it_has(schema, path, method, component):
    """``to`` by role: "inviter" only when an invite is accepted (``Trigger.recipients``)."""
    found = {}
    for name, shape in shapes(schema, path, method).items():
        mapping = shape["properties"]["actions"]["items"]["discriminator"]["mapping"]
        email = resolve(schema, {"$ref": mapping["send_email"]})
        [roles] = [
            choice["enum"]
            for choice in email["properties"]["input"]["properties"]["to"]["anyOf"]
            if "enum" in choice
        ]
        found[name] = set(roles)
    assert found == {name: set(trigger.recipients) for name, trigger in TRIGGERS.items()}


@pytest.mark.parametrize(("path", "method", "component"), WRITES)
@pytest.mark.parametrize("trigger", list(TRIGGERS))
@pytest.mark.parametrize("to", ["learner", "inviter"])
def test_a_recipient_the_schema_accepts_is_accepted_and_one_it_refuses_is_refused(
    api, owner, schema, path, method, component, trigger, to
):
    body = {
        "name": f"To the {to}",
        "trigger": trigger,
        "actions": [{"type": "send_email", "input": {**welcome_email()["input"], "to": to}}],
        "conditions": {},
    }
    valid = validator(schema, component).is_valid(body)
    answer = send(api, owner, method, body)
    assert valid == (to in TRIGGERS[trigger].recipients)
    if valid:
        assert answer.status_code == (201 if method == "post" else 200), answer.content
    else:
        refused = assert_error(answer, 400, "validation_error")
        assert set(refused["details"]) == {"actions.0.input.to"}
