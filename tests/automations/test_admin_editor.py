"""The automation editor: actions are small forms generated from the registry, read back in
the order the page gives them, and judged by the registry as anything saved."""

import html
import re

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
    # A header line that cannot be read hides no other problem: both in one round.
    assert response.context["adminform"].form.errors == {
        "actions": [
            "Action 1 (send_email), input.subject: Must be a non-empty string.",
            "Action 2 (webhook), input.headers: 'no colon here' is not a header line: "
            "write Name: value.",
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


def errors_beside_fields(page: str) -> dict[str, list[str]]:
    """Each error list of the actions editor by the input it stands beside."""
    found = {}
    for name, items in re.findall(
        r'<ul class="errorlist[^"]*" id="id_(.+?)_error">(.*?)</ul>', page
    ):
        found[name] = [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", items)]
    return found


def invalid_inputs(page: str) -> list[str]:
    return sorted(re.findall(r'name="([^"]+)"[^>]*aria-invalid="true"', page))


def test_the_fields_have_labels_help_and_selects_for_fixed_values(staff):
    page = staff.get(ADD).content.decode()
    for label in ("Recipient", "Subject", "Course", "URL", "HTTP method", "Headers"):
        assert f">{label}</label>" in page
    assert "One <code>Name: value</code> per line" in page
    assert ">to</label>" not in page and ">method</label>" not in page
    method = page.split('name="actions-0-webhook-method"')[1].split("</select>")[0]
    assert re.findall(r'<option value="([^"]*)"', method) == ["POST", "PUT"]
    recipient = page.split('name="actions-0-send_email-to"')[1].split("</select>")[0]
    assert re.findall(r'<option value="([^"]*)"', recipient) == ["learner", "inviter", "address"]
    assert 'value="learner" selected' in recipient
    # The address box is there, hidden until "An e-mail address" is chosen.
    assert re.search(r'name="actions-0-send_email-to-address"[^>]* hidden', page)


def test_an_address_chosen_as_recipient_is_stored_as_the_recipient(staff, org):
    data = post_data(
        org,
        ("send_email", {"to": "address", "to-address": " ops@example.com ", "subject": "Hi"}),
        ("webhook", {"url": "https://h.example.com", "method": "PUT"}),
    )
    assert staff.post(ADD, data).status_code == 302
    automation = Automation.all_orgs.get()
    assert [a["input"] for a in automation.actions] == [
        {"to": "ops@example.com", "subject": "Hi", "body": ""},
        {"url": "https://h.example.com", "method": "PUT"},
    ]
    page = staff.get(f"{ADD.replace('add/', '')}{automation.pk}/change/").content.decode()
    recipient = page.split('name="actions-0-send_email-to"')[1].split("</select>")[0]
    assert 'value="address" selected' in recipient
    assert re.search(r'name="actions-0-send_email-to-address"[^>]*value="ops@example.com"', page)
    method = page.split('name="actions-1-webhook-method"')[1].split("</select>")[0]
    assert 'value="PUT" selected' in method


def test_every_problem_shows_beside_its_own_field_in_one_round(staff, org):
    data = post_data(
        org,
        ("send_email", {"to": "address", "to-address": "not-an-address", "subject": ""}),
        ("webhook", {"url": "ftp://h.example.com", "method": "post", "headers": "X-A: 1\nbad"}),
        ("enroll_in_course", {"courseId": ""}),
    )
    response = staff.post(ADD, data)
    assert response.status_code == 200
    page = response.content.decode()
    assert errors_beside_fields(page) == {
        "actions-0-send_email-to": ["Must be inviter, learner or an e-mail address."],
        "actions-0-send_email-subject": ["Must be a non-empty string."],
        "actions-1-webhook-url": ["Must be an http or https URL."],
        "actions-1-webhook-method": ["Must be one of POST, PUT."],
        "actions-1-webhook-headers": ["'bad' is not a header line: write Name: value."],
        "actions-2-enroll_in_course-courseId": [
            "Must be an id: a UUID string such as 0190c3a2-7b1e-7c3d-9f00-2a5b6c7d8e9f."
        ],
    }
    # Only the faulty inputs are outlined: not the editor's whole row, not the good ones.
    assert invalid_inputs(page) == sorted(
        [
            "actions-0-send_email-to-address",
            "actions-0-send_email-subject",
            "actions-1-webhook-url",
            "actions-1-webhook-method",
            "actions-1-webhook-headers",
            "actions-2-enroll_in_course-courseId",
        ]
    )
    assert "form-row errors field-actions" not in page
    # What was given is kept to correct: the address, the header lines, a method that the
    # select does not offer.
    assert 'value="not-an-address"' in page and "X-A: 1\nbad</textarea>" in page
    assert '<option value="post" selected>post (not a valid choice)</option>' in page
    assert not Automation.all_orgs.exists()


def test_a_problem_of_the_actions_as_a_whole_stays_above_them(staff, org):
    data = post_data(org, ("send_email", {"to": "learner", "subject": "Hi"}))
    data["actions-0-type"] = "send_sms"
    page = staff.post(ADD, data).content.decode()
    assert errors_beside_fields(page) == {
        "actions-0-type": [
            "Unknown action type 'send_sms'; expected one of enroll_in_course, send_email, webhook."
        ]
    }
    data["actions-TOTAL_FORMS"] = "0"
    page = staff.post(ADD, data).content.decode()
    assert errors_beside_fields(page) == {"actions": ["At least one action is required."]}


def test_a_new_automations_signing_secret_is_shown_once(staff, org):
    data = post_data(org, ("send_email", {"to": "learner", "subject": "Hi", "body": ""}))
    page = staff.post(ADD, data, follow=True).content.decode()
    automation = Automation.all_orgs.get()
    [shown] = re.findall(r"whsec_[A-Za-z0-9+/=]{44}", page)
    assert shown == automation.signing_secret
    again = staff.get(f"{ADD.replace('add/', '')}{automation.pk}/change/").content.decode()
    assert automation.signing_secret not in again
    edited = {**data, "name": "Renamed"}
    page = staff.post(f"{ADD.replace('add/', '')}{automation.pk}/change/", edited, follow=True)
    assert "whsec_" not in page.content.decode()  # not on a change
