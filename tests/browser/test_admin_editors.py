"""Staff build a course and an automation in a real browser without typing any JSON: the
course outline (modules with their activities inside) and its completion rule fields, and the
automation's actions as one small form each. The API then lists them as entered.

With ``LMS_ADMIN_SCREENSHOTS=docs/admin`` these tests also save the screenshots shown in the
README (``make screenshots``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from automations.models import Automation
from learn.models import Activity, Course, Module
from organizations.models import Membership
from tests.factories import OrganizationFactory
from tests.helpers import make_member
from tests.learn.factories import CourseFactory, EnrollmentFactory


@pytest.fixture
def shoot(page):
    """Saves a screenshot of the page when LMS_ADMIN_SCREENSHOTS names a folder (with the
    navigation sidebar folded, as staff fold it for a wide form); does nothing otherwise."""
    folder = os.environ.get("LMS_ADMIN_SCREENSHOTS")
    if folder:
        page.set_viewport_size({"width": 1280, "height": 800})
        page.add_init_script("localStorage.setItem('django.admin.navSidebarIsOpen', 'false')")

    def save(page, name: str) -> None:
        if not folder:
            return
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)

    return save


def add_row(ui, prefix: str) -> str:
    """Clicks the "Add another" link of a group (a nested one: ``modules-0-activities``);
    returns the new row's prefix."""
    total = ui.page.locator(f"#id_{prefix}-TOTAL_FORMS")
    before = int(total.input_value())
    # The group's own link is its last one: a module's group holds its activities' links.
    ui.page.locator(f"#{prefix}-group a.djn-add-handler").last.click()
    assert int(total.input_value()) == before + 1
    return f"{prefix}-{before}"


def visible(ui, name: str) -> bool:
    return ui.field(name).is_visible()


ACTIVITIES = {
    "Getting started": [
        ("Welcome video", "Media watched", {"threshold": 90, "duration": 600}),
        ("Read the guide", "Pages viewed", {"threshold": 100, "pages": 12}),
    ],
    "Practice": [
        ("First exercise", "Time spent", {"min_seconds": 300}),
        ("Final quiz", "Score", {"passing_score": 70}),
    ],
}
SETTINGS = [
    {"completion": {"type": "media", "threshold": 0.9}, "duration": 600},
    {"completion": {"type": "pages", "threshold": 1}, "pages": 12},
    {"completion": {"type": "time", "minSeconds": 300}},
    {"completion": {"type": "score", "passingScore": 0.7}},
]


def test_staff_build_a_course_of_two_modules_and_four_rules_without_json(
    admin_as, make_staff, live_api, shoot
):
    org = OrganizationFactory(name="Acme Learning")
    OrganizationFactory(name="Other Org")
    staff = make_staff(org, Membership.Role.OWNER)
    learner = make_member(org, Membership.Role.LEARNER)

    ui = admin_as(staff.user)
    ui.open_add("learn", "course")
    assert ui.select_options("org") == ["Acme Learning"]
    ui.fill({"org": "Acme Learning", "title": "Python basics", "published": True})
    for title, activities in ACTIVITIES.items():
        module = add_row(ui, "modules")
        ui.fill({f"{module}-title": title, f"{module}-published": True})
        for name, rule, values in activities:
            row = add_row(ui, f"{module}-activities")
            ui.fill({f"{row}-title": name, f"{row}-published": True, f"{row}-rule_type": rule})
            ui.fill({f"{row}-{field}": value for field, value in values.items()})
            # Only the chosen rule's fields are offered.
            shown = {
                f
                for f in ("min_seconds", "threshold", "passing_score")
                if visible(ui, f"{row}-{f}")
            }
            assert shown == {f for f in values if f not in ("duration", "pages")}
    ui.save_added("_continue")
    shoot(ui.page, "course-outline")
    assert ui.field("modules-1-activities-1-passing_score").input_value() == "70"

    course = Course.all_orgs.get(title="Python basics")
    EnrollmentFactory(course=course, membership=learner.membership)
    listing = live_api.get(f"/api/learn/courses/{course.id}/activities", token=learner.token)
    assert listing.status == 200, listing.body
    modules = {str(m.id): m.title for m in Module.all_orgs.filter(course=course)}
    shown = [(modules[a["moduleId"]], a["seq"], a["settings"]) for a in listing.json()]
    rows = [("Getting started", 1), ("Getting started", 2), ("Practice", 1), ("Practice", 2)]
    assert shown == [(*row, settings) for row, settings in zip(rows, SETTINGS, strict=True)]
    assert [
        a.title for a in Activity.all_orgs.filter(course=course).order_by("module__seq", "seq")
    ] == [name for activities in ACTIVITIES.values() for name, _, _ in activities]

    # Reordering: "down" on the first activity of the first module swaps it with the second.
    ui.page.locator("#modules-0-activities-0 button.lms-move[title='Move down']").click()
    assert ui.field("modules-0-activities-0-seq").input_value() == "2"
    assert ui.field("modules-0-activities-1-seq").input_value() == "1"
    ui.save("_continue")
    assert any("was changed successfully" in m for m in ui.messages()), ui.errors()
    first = Module.all_orgs.get(course=course, seq=1)
    assert list(first.activities.order_by("seq").values_list("title", flat=True)) == [
        "Read the guide",
        "Welcome video",
    ]

    # An activity's own page: the same editor, with the rule table as help.
    ui.follow(ui.page.locator("#modules-1-activities-1 a.inlinechangelink"))
    assert ui.field("rule_type").input_value() == "score"
    shoot(ui.page, "activity-rule")
    assert "completed when" in ui.main_text().lower()


def test_staff_write_an_automation_of_two_actions_without_json(
    admin_as, make_staff, live_api, shoot
):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)
    owner = make_member(org, Membership.Role.OWNER)
    course = CourseFactory(org=org, title="Python basics")
    CourseFactory(org=OrganizationFactory(name="Other Org"), title="Their course")

    ui = admin_as(staff.user)
    ui.open_add("automations", "automation")
    ui.fill(
        {
            "org": "Acme Learning",
            "name": "Welcome new learners",
            "trigger": "invite.accepted: An invitee accepts an invite and becomes a member "
            "('learner' is the new member).",
        }
    )
    # The page starts with one e-mail to the learner; the webhook is added, then moved first.
    ui.fill(
        {
            "actions-0-send_email-subject": "Welcome, {{ learner.firstName }}",
            "actions-0-send_email-body": "Your first course: {{ course.title }}.",
        }
    )
    ui.page.click(".lms-action-add")
    ui.fill({"actions-1-type": "enroll_in_course: Enroll the learner in a course."})
    assert ui.select_options("actions-1-enroll_in_course-courseId") == ["Python basics"]
    ui.fill({"actions-1-enroll_in_course-courseId": "Python basics"})
    assert not visible(ui, "actions-1-send_email-subject")
    ui.page.locator("li.lms-action").nth(1).locator(".lms-action-up").click()
    assert ui.page.locator(".lms-action-number").all_inner_texts() == ["Action 1", "Action 2"]
    shoot(ui.page, "automation-actions")
    ui.save_added()

    automation = Automation.all_orgs.get(name="Welcome new learners")
    response = live_api.get(f"/api/automations/{automation.id}", token=owner.token)
    assert response.status == 200, response.body
    body = response.json()
    assert (body["trigger"], body["actions"]) == (
        "invite.accepted",
        [
            {"type": "enroll_in_course", "input": {"courseId": str(course.id)}},
            {
                "type": "send_email",
                "input": {
                    "to": "learner",
                    "subject": "Welcome, {{ learner.firstName }}",
                    "body": "Your first course: {{ course.title }}.",
                },
            },
        ],
    )
