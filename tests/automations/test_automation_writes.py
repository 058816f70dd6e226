"""Automations are validated against the registry wherever they are saved: the model's
clean(), the service, the admin's form. And seed_demo fills its part of the manifest."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client

from automations.models import Automation
from automations.services import save_automation
from lms.errors import Conflict
from tests.automations.factories import editor_fields, welcome_email
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def clean_errors(automation: Automation) -> dict[str, list[str]]:
    """What the model's full_clean() refuses in ``automation``, by field."""
    with pytest.raises(ValidationError) as caught:
        automation.full_clean()
    return caught.value.message_dict


def test_model_clean_explains_which_action_and_field_is_wrong(org):
    automation = Automation(
        org=org,
        name="Bad",
        trigger="course.finished",
        actions=[welcome_email(), welcome_email(subject="")],
    )
    assert clean_errors(automation) == {
        "trigger": [
            "Unknown trigger 'course.finished'; expected one of activity.completed, "
            "course.completed, enrollment.created, invite.accepted."
        ],
        "actions": ["Action 2 (send_email), input.subject: Must be a non-empty string."],
    }


def test_model_errors_keep_the_wire_path_of_each_problem(org):
    """What the admin's form places each problem by: its path, not its sentence."""
    automation = Automation(
        org=org,
        name="Bad",
        trigger="enrollment.created",
        actions=[welcome_email(), welcome_email(subject="")],
    )
    with pytest.raises(ValidationError) as caught:
        automation.full_clean()
    [error] = caught.value.error_dict["actions"]
    assert error.params == {
        "path": "actions.1.input.subject",
        "problem": "Must be a non-empty string.",
    }


def test_model_errors_quote_a_percent_sign_as_sent(org):
    automation = Automation(
        org=org, name="Bad", trigger="100%s", actions=[{"type": "%(path)s", "input": {}}]
    )
    assert clean_errors(automation) == {
        "trigger": [
            "Unknown trigger '100%s'; expected one of activity.completed, "
            "course.completed, enrollment.created, invite.accepted."
        ],
        "actions": [
            "Action 1 (%(path)s), type: Unknown action type '%(path)s'; expected one of "
            "enroll_in_course, send_email, webhook."
        ],
    }


def test_service_saves_a_valid_automation(org):
    automation = save_automation(
        org=org, name="Welcome", trigger="invite.accepted", actions=[welcome_email(to="inviter")]
    )
    assert Automation.all_orgs.for_org(org).get() == automation


def test_service_refuses_with_details_keyed_by_wire_path(org):
    with pytest.raises(ValidationError) as caught:
        save_automation(
            org=org,
            name="Welcome",
            trigger="enrollment.created",
            actions=[welcome_email(), {"type": "webhook", "input": {"url": "ftp://x"}}],
        )
    assert caught.value.message_dict == {"actions.1.input.url": ["Must be an http or https URL."]}
    assert not Automation.all_orgs.exists()


def test_service_refuses_a_duplicate_name_in_one_organization(org, other_org):
    args = {"name": "Welcome", "trigger": "enrollment.created", "actions": [welcome_email()]}
    save_automation(org=org, **args)
    save_automation(org=other_org, **args)  # another organization may use the name
    with pytest.raises(Conflict) as caught:
        save_automation(org=org, **args)
    assert set(caught.value.details) == {"name"}


# --- the admin -----------------------------------------------------------------------------


@pytest.fixture
def superuser_client() -> Client:
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def form_data(org, actions=None, **changes) -> dict:
    """The admin's form as posted: the actions as its editor sends them."""
    data = {
        "org": str(org.id),
        "name": "Welcome",
        "description": "",
        "trigger": "enrollment.created",
        "enabled": "on",
        **editor_fields([welcome_email()] if actions is None else actions),
    }
    return {**data, **changes}


def test_admin_saves_a_valid_automation(org, superuser_client):
    response = superuser_client.post("/admin/automations/automation/add/", form_data(org))
    assert response.status_code == 302
    assert Automation.all_orgs.get().actions == [welcome_email()]


def test_admin_refuses_a_bad_action_with_a_readable_error(org, superuser_client):
    actions = [welcome_email(), welcome_email(to="everyone")]
    response = superuser_client.post(
        "/admin/automations/automation/add/", form_data(org, actions=actions)
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert errors == {
        "actions": [
            "Action 2 (send_email), input.to: Must be inviter, learner or an e-mail address."
        ]
    }
    # Shown beside the recipient of the second action, which holds what was given.
    page = response.content.decode()
    assert (
        '<ul class="errorlist" id="id_actions-1-send_email-to_error"><li>Must be inviter, '
        "learner or an e-mail address.</li></ul>"
    ) in page
    assert 'value="everyone"' in page
    assert not Automation.all_orgs.exists()


def test_admin_refuses_an_unknown_trigger_and_action_type_once_each(org, superuser_client):
    response = superuser_client.post(
        "/admin/automations/automation/add/",
        form_data(
            org,
            trigger="course.deleted",
            actions=[{"type": "send_sms", "input": {}}],
        ),
    )
    errors = response.context["adminform"].form.errors
    assert errors["trigger"] == [
        "Unknown trigger 'course.deleted'; expected one of activity.completed, "
        "course.completed, enrollment.created, invite.accepted."
    ]
    assert errors["actions"] == [
        "Action 1 (send_sms), type: Unknown action type 'send_sms'; expected one of "
        "enroll_in_course, send_email, webhook."
    ]


def test_admin_change_is_validated_too(org, superuser_client):
    automation = save_automation(
        org=org, name="Welcome", trigger="enrollment.created", actions=[welcome_email()]
    )
    response = superuser_client.post(
        f"/admin/automations/automation/{automation.pk}/change/",
        form_data(org, actions=[welcome_email(subject="Line\nbreak")]),
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["actions"] == [
        "Action 1 (send_email), input.subject: Must be one line."
    ]
    automation.refresh_from_db()
    assert automation.actions == [welcome_email()]


def test_admin_of_one_org_cannot_file_an_automation_under_another(org, other_org, admin_member):
    user = admin_member.user
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    response = client.post("/admin/automations/automation/add/", form_data(other_org))
    assert response.status_code == 200
    assert "org" in response.context["adminform"].form.errors
    assert not Automation.all_orgs.exists()


# --- seed_demo -------------------------------------------------------------------------------


def test_seed_demo_lists_readable_automations_and_is_idempotent(api):
    first = json.loads(call_demo())
    second = json.loads(call_demo())
    for key in ("org", "otherOrg"):
        ids = second[key]["automations"]
        assert len(ids) >= 2 and ids == first[key]["automations"]
        owner = second[key]["tokens"]["owner"]
        bodies = [api.get(f"/api/automations/{i}", token=owner).json() for i in ids]
        assert all(body["orgId"] == second[key]["id"] for body in bodies)
        assert {body["enabled"] for body in bodies} == {True, False}
    assert Automation.all_orgs.count() == len(second["org"]["automations"]) * 2


def call_demo() -> str:
    out = StringIO()
    call_command("seed_demo", "--json", stdout=out, stderr=StringIO())
    return out.getvalue()


def test_enroll_in_course_must_name_a_course_of_the_same_organization(org, other_org):
    from tests.learn.factories import CourseFactory

    mine, theirs = CourseFactory(org=org), CourseFactory(org=other_org)
    enroll = {"type": "enroll_in_course", "input": {"courseId": str(theirs.id)}}
    automation = Automation(
        org=org, name="Enroll", trigger="invite.accepted", actions=[welcome_email(), enroll]
    )
    assert clean_errors(automation) == {
        "actions": [
            "Action 2 (enroll_in_course), input.courseId: No course with this id in the "
            "automation's organization."
        ]
    }
    enroll["input"]["courseId"] = str(mine.id)
    automation.full_clean()  # its own organization's course is fine


def test_the_admin_validates_a_definition_once(org, superuser_client, monkeypatch):
    from automations import definition

    calls = []
    real = definition.validate_automation
    monkeypatch.setattr(definition, "validate_automation", lambda *a: calls.append(a) or real(*a))
    response = superuser_client.post("/admin/automations/automation/add/", form_data(org))
    assert response.status_code == 302
    assert len(calls) == 1
