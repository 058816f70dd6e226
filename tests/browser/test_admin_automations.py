"""Staff write automations in a real browser with the actions editor (one small form per
action): a valid one reads back exactly over the API, an invalid one is a form error that
names the offending value, and nothing is saved."""

from __future__ import annotations

from automations import registry
from automations.models import Automation
from organizations.models import Membership
from tests.automations.factories import AutomationFactory, welcome_email
from tests.browser.admin_ui import Value
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
            "input": {
                "url": "https://hooks.example.com/lms",
                "method": "PUT",
                "headers": {"X-Api-Key": "abc123"},
            },
        },
    ]

    ui = admin_as(staff.user)
    ui.open_add("automations", "automation")
    assert ui.select_options("org") == ["Acme Learning"]
    assert ui.select_options("trigger") == [
        f"{t.name}: {t.description}" for t in registry.TRIGGERS.values()
    ]
    ui.fill(
        {
            "org": "Acme Learning",
            "name": "Welcome new learners",
            "description": "Greets and enrolls.",
            "trigger": Value("invite.accepted"),
        }
    )
    ui.fill_actions(actions)
    ui.save_added()

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
    ui.fill({"org": "Acme Learning", "name": "Welcome new learners"})
    ui.fill({"trigger": Value("enrollment.created")})
    ui.fill_actions([{"type": "send_email", "input": {"to": "learner", "body": "Hello."}}])
    # A type that left the registry after the page was rendered (or a hand-made request).
    ui.page.click(".lms-action-add")
    ui.field("actions-1-type").evaluate(
        "select => { select.add(new Option('sms', 'sms')); select.value = 'sms'; }"
    )
    ui.save()

    assert "Please correct the errors below." in ui.error_note()
    # Each beside its own input, in one round.
    assert ui.errors() == {
        "actions-0-send_email-subject": ["Must be a non-empty string."],
        "actions-1-type": [
            "Unknown action type 'sms'; expected one of enroll_in_course, send_email, webhook."
        ],
    }
    assert not Automation.all_orgs.exists()


def test_the_add_page_offers_a_send_email_to_fill_in_and_refuses_it_unfilled(admin_as, make_staff):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)

    ui = admin_as(staff.user)
    ui.open_add("automations", "automation")
    assert ui.field("actions-0-type").input_value() == "send_email"
    assert ui.field("actions-0-send_email-to").input_value() == "learner"
    ui.fill({"org": "Acme Learning", "name": "Welcome", "trigger": Value("enrollment.created")})
    ui.save()

    assert ui.errors() == {"actions-0-send_email-subject": ["Must be a non-empty string."]}
    assert not Automation.all_orgs.exists()

    ui.fill({"actions-0-send_email-subject": "Welcome!"})
    ui.save_added()
    assert Automation.all_orgs.get().actions == [
        {"type": "send_email", "input": {"to": "learner", "subject": "Welcome!", "body": ""}}
    ]


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
