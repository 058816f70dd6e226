"""Staff write automations in a real browser: a valid one reads back exactly over the API, an
invalid one is a form error that names the offending value, and nothing is saved."""

from __future__ import annotations

import json

from automations import registry
from automations.models import Automation
from organizations.models import Membership
from tests.automations.factories import AutomationFactory, welcome_email
from tests.factories import OrganizationFactory
from tests.helpers import make_member
from tests.learn.factories import CourseFactory

TRIGGER_NAMES = "activity.completed, course.completed, enrollment.created, invite.accepted"


def test_owner_saves_an_automation_that_the_api_reads_back_exactly(admin_as, make_staff, live_api):
    org = OrganizationFactory(name="Acme Learning")
    OrganizationFactory(name="Other Org")
    staff = make_staff(org, Membership.Role.OWNER)
    owner = make_member(org, Membership.Role.OWNER)
    course = CourseFactory(org=org, title="Python basics")
    actions = [
        {
            "type": "send_email",
            "input": {"to": "learner", "subject": "Welcome aboard", "body": "See you inside."},
        },
        {"type": "enroll_in_course", "input": {"courseId": str(course.id)}},
        {
            "type": "webhook",
            "input": {"url": "https://hooks.example.com/lms", "method": "PUT"},
        },
    ]

    ui = admin_as(staff.user)
    ui.open_add("automations", "automation")
    assert ui.select_options("org") == ["Acme Learning"]
    assert ui.select_options("trigger") == list(registry.TRIGGERS)
    ui.fill(
        {
            "org": "Acme Learning",
            "name": "Welcome new learners",
            "description": "Greets and enrolls.",
            "trigger": "invite.accepted",
            "actions": actions,
        }
    )
    ui.save()
    assert any("was added successfully" in message for message in ui.messages()), ui.errors()

    automation = Automation.all_orgs.get(name="Welcome new learners")
    response = live_api.get(f"/api/automations/{automation.id}", token=owner.token)
    assert response.status == 200, response.body
    body = response.json()
    assert {key: body[key] for key in ("orgId", "id", "name", "description", "enabled")} == {
        "orgId": str(org.id),
        "id": str(automation.id),
        "name": "Welcome new learners",
        "description": "Greets and enrolls.",
        "enabled": True,
    }
    assert body["trigger"] == "invite.accepted"
    assert body["actions"] == actions


def test_a_send_email_without_subject_and_an_unknown_action_are_named_in_the_form(
    admin_as, make_staff
):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)

    ui = admin_as(staff.user)
    ui.open_add("automations", "automation")
    ui.fill(
        {
            "org": "Acme Learning",
            "name": "Welcome new learners",
            "trigger": "enrollment.created",
            "actions": [
                {"type": "send_email", "input": {"to": "learner", "body": "Hello."}},
                {"type": "sms", "input": {"to": "learner"}},
            ],
        }
    )
    ui.save()

    assert "Please correct the error below." in ui.error_note()
    assert ui.errors() == {
        "actions": [
            "Action 1 (send_email), input.subject: This field is required.",
            "Action 2 (sms), type: Unknown action type 'sms'; expected one of "
            "enroll_in_course, send_email, webhook.",
        ]
    }
    assert not Automation.all_orgs.exists()


def test_the_add_page_offers_a_send_email_template_and_refuses_it_unfilled(admin_as, make_staff):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)

    ui = admin_as(staff.user)
    ui.open_add("automations", "automation")
    template = [{"type": "send_email", "input": {"to": "learner", "subject": "", "body": ""}}]
    assert json.loads(ui.field("actions").input_value()) == template
    ui.fill({"org": "Acme Learning", "name": "Welcome", "trigger": "enrollment.created"})
    ui.save()

    assert ui.errors() == {
        "actions": ["Action 1 (send_email), input.subject: Must be a non-empty string."]
    }
    assert not Automation.all_orgs.exists()

    template[0]["input"]["subject"] = "Welcome!"
    ui.fill({"actions": template})
    ui.save()
    assert any("was added successfully" in message for message in ui.messages()), ui.errors()
    assert Automation.all_orgs.get().actions == template


def test_an_unknown_trigger_is_refused_and_the_automation_stays_as_it_was(admin_as, make_staff):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)
    automation = AutomationFactory(org=org, name="Welcome", trigger="enrollment.created")

    ui = admin_as(staff.user)
    ui.open_change(automation)
    # The select offers the registry's triggers only; a form rendered before a trigger left
    # the registry (or a hand-made request) can still send another one, which the server
    # must refuse on its own.
    ui.field("trigger").evaluate(
        "select => { select.add(new Option('lesson.watched', 'lesson.watched'));"
        " select.value = 'lesson.watched'; }"
    )
    ui.fill({"description": "Changed"})
    ui.save()

    assert "Please correct the error below." in ui.error_note()
    assert ui.errors() == {
        "trigger": [f"Unknown trigger 'lesson.watched'; expected one of {TRIGGER_NAMES}."]
    }
    automation.refresh_from_db()
    assert (automation.trigger, automation.description, automation.actions) == (
        "enrollment.created",
        "Greets new learners.",
        [welcome_email()],
    )
