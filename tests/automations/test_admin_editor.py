"""The automation editor: actions are small forms generated from the registry, read back in
the order the page gives them, and judged by the registry as anything saved."""

import pytest
from django.test import Client
from django.utils.html import escape

from automations import registry
from automations.models import Automation
from tests.automations.factories import AutomationFactory
from tests.helpers import admin_client
from tests.learn.factories import CourseFactory

pytestmark = pytest.mark.django_db
ADD = "/admin/automations/automation/add/"


@pytest.fixture
def staff(org) -> Client:
    return admin_client(org)


def post_data(org, *actions: tuple[str, dict], **fields) -> dict:
    data = {"org": str(org.pk), "name": "Welcome", "trigger": "enrollment.created"}
    data |= {"actions-TOTAL_FORMS": str(len(actions))}
    for index, (kind, values) in enumerate(actions):
        data[f"actions-{index}-type"] = kind
        data |= {f"actions-{index}-{kind}-{name}": value for name, value in values.items()}
    return data | fields


def test_every_field_of_every_action_type_is_on_the_add_page(staff):
    page = staff.get(ADD).content.decode()
    for spec in registry.ACTION_TYPES.values():
        for field in spec.fields:
            assert f'name="actions-0-{spec.name}-{field.name}"' in page
    for trigger in registry.TRIGGERS.values():
        assert escape(f"{trigger.name}: {trigger.description}") in page
    assert "{{ learner.firstName }}" in page


def test_actions_are_saved_in_the_order_the_page_gives(staff, org):
    course = CourseFactory(org=org, title="Python basics")
    data = post_data(
        org,
        ("send_email", {"to": "learner", "subject": "Hi {{ learner.firstName }}", "body": ""}),
        ("enroll_in_course", {"courseId": str(course.id)}),
        ("webhook", {"url": "https://hooks.example.com/x", "method": "", "headers": ""}),
    )
    # Moved on the page: the course enrollment first, the e-mail last.
    data |= {"actions-0-ORDER": "2", "actions-1-ORDER": "0", "actions-2-ORDER": "1"}
    response = staff.post(ADD, data)
    assert response.status_code == 302, response.context and response.context["errors"]
    assert Automation.all_orgs.get().actions == [
        {"type": "enroll_in_course", "input": {"courseId": str(course.id)}},
        {"type": "webhook", "input": {"url": "https://hooks.example.com/x"}},
        {
            "type": "send_email",
            "input": {"to": "learner", "subject": "Hi {{ learner.firstName }}", "body": ""},
        },
    ]


def test_webhook_headers_are_written_one_a_line(staff, org):
    headers = "X-Api-Key: 123\nX-Source: lms"
    data = post_data(org, ("webhook", {"url": "https://h.example.com", "headers": headers}))
    assert staff.post(ADD, data).status_code == 302
    assert Automation.all_orgs.get().actions[0]["input"]["headers"] == {
        "X-Api-Key": "123",
        "X-Source": "lms",
    }
    page = staff.get(f"/admin/automations/automation/{Automation.all_orgs.get().pk}/change/")
    # One "Name: value" a line (PostgreSQL's jsonb keeps no key order).
    form = page.context["adminform"].form
    [row] = form.fields["actions"].widget.format_value(form.initial["actions"])
    assert sorted(row.values["headers"].splitlines()) == ["X-Api-Key: 123", "X-Source: lms"]


def test_problems_are_named_by_action_and_nothing_is_saved(staff, org):
    data = post_data(
        org,
        ("send_email", {"to": "learner", "subject": "", "body": "Hello"}),
        ("webhook", {"url": "https://h.example.com", "headers": "no colon here"}),
    )
    response = staff.post(ADD, data)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {
        "actions": [
            "Action 2 (webhook), input.headers: 'no colon here' is not a header line: "
            "write Name: value."
        ]
    }
    del data["actions-1-type"]  # the webhook removed on the page
    response = staff.post(ADD, data)
    assert response.context["adminform"].form.errors == {
        "actions": ["Action 1 (send_email), input.subject: Must be a non-empty string."]
    }
    data["actions-TOTAL_FORMS"] = "0"
    response = staff.post(ADD, data)
    assert response.context["adminform"].form.errors == {
        "actions": ["At least one action is required."]
    }
    assert not Automation.all_orgs.exists()


def test_the_course_picker_offers_only_the_staff_members_courses(staff, org, other_org):
    CourseFactory(org=org, title="Mine")
    CourseFactory(org=other_org, title="Theirs")
    page = staff.get(ADD).content.decode()
    assert ">Mine</option>" in page and "Theirs" not in page


def test_a_stored_automation_shows_its_actions_as_fields(staff, org):
    course = CourseFactory(org=org, title="Python basics")
    actions = [{"type": "enroll_in_course", "input": {"courseId": str(course.id)}}]
    automation = AutomationFactory(org=org, actions=actions)
    page = staff.get(f"/admin/automations/automation/{automation.pk}/change/").content.decode()
    assert f'<option value="{course.id}" selected>Python basics</option>' in page
