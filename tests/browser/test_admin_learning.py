"""Staff build a course in a real browser (modules and activities inline, an activity's
completion rule in its settings), enroll a learner, and the learner sees it over the API."""

from __future__ import annotations

import json

from learn.models import Activity, Course, Enrollment, Module
from organizations.models import Membership
from tests.browser.admin_ui import Value
from tests.factories import OrganizationFactory
from tests.helpers import make_member
from tests.learn.factories import ActivityFactory, CourseFactory, ModuleFactory

TIME_RULE = {"completion": {"type": "time", "minSeconds": 60}}


def test_owner_builds_a_course_whose_time_rule_the_api_applies(admin_as, make_staff, live_api):
    org = OrganizationFactory(name="Acme Learning")
    OrganizationFactory(name="Other Org")
    staff = make_staff(org, Membership.Role.OWNER)
    learner = make_member(org, Membership.Role.LEARNER, user__email="lee@acme.example")

    ui = admin_as(staff.user)
    ui.open_add("learn", "course")
    # A staff owner is offered their own organization only.
    assert ui.select_options("org") == ["Acme Learning"]
    ui.fill({"org": "Acme Learning", "title": "Python basics", "published": True})
    row = ui.add_inline_row("modules")
    ui.fill_inline("modules", row, {"seq": 1, "title": "Getting started", "published": True})
    # An activity's module must be saved first: the course page offers only saved modules.
    ui.save("_continue")
    assert any("was added successfully" in message for message in ui.messages()), ui.errors()

    course = Course.all_orgs.get(title="Python basics")
    [module] = course.modules.all()
    assert (course.org_id, module.org_id, module.seq, module.published) == (
        org.id,
        org.id,
        1,
        True,
    )
    row = ui.add_inline_row("activities")
    assert ui.select_options(f"activities-{row}-module") == ["1. Getting started"]
    ui.fill_inline(
        "activities",
        row,
        {
            "module": Value(str(module.pk)),
            "seq": 1,
            "title": "Watch the intro",
            "published": True,
            "settings": TIME_RULE,
        },
    )
    ui.save("_continue")
    assert any("was changed successfully" in message for message in ui.messages()), ui.errors()
    [activity] = Activity.all_orgs.filter(course=course)
    assert (activity.module_id, activity.org_id, activity.settings) == (
        module.id,
        org.id,
        TIME_RULE,
    )

    # Enrolling is the enrollment page's job; its choices are this organization's only.
    ui.open_add("learn", "enrollment")
    assert ui.select_options("course") == ["Python basics"]
    ui.fill({"course": course, "membership": learner.membership})
    ui.save()
    assert any("was added successfully" in message for message in ui.messages()), ui.errors()
    assert Enrollment.all_orgs.get(course=course).membership_id == learner.membership.id

    # The learner's client sees the activity with its rule, as stored.
    listing = live_api.get(f"/api/learn/courses/{course.id}/activities", token=learner.token)
    assert listing.status == 200, listing.body
    [shown] = listing.json()
    assert {key: shown[key] for key in ("id", "moduleId", "courseId", "seq", "settings")} == {
        "id": str(activity.id),
        "moduleId": str(module.id),
        "courseId": str(course.id),
        "seq": 1,
        "settings": TIME_RULE,
    }

    # The server applies the rule: 45 of 60 seconds is in progress, 60 completes it.
    def report(seconds: float):
        body = {"activity": str(activity.id), "reports": [{"type": "time", "seconds": seconds}]}
        response = live_api.post("/api/learn/progress", body, token=learner.token)
        assert response.status == 200, response.body
        return response.json()

    assert report(45) == {"status": "in-progress", "progress": 0.75}
    assert report(15) == {"status": "completed", "progress": 1.0}


def test_a_rule_without_min_seconds_is_refused_on_the_course_page(admin_as, make_staff):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)
    module = ModuleFactory(course=CourseFactory(org=org, title="Python basics"), seq=1)

    ui = admin_as(staff.user)
    ui.open_change(module.course)
    row = ui.add_inline_row("activities")
    ui.fill_inline(
        "activities",
        row,
        {
            "module": Value(str(module.pk)),
            "seq": 1,
            "title": "Timed reading",
            "settings": {"completion": {"type": "time"}},
        },
    )
    ui.save()

    assert "Please correct the error below." in ui.error_note()
    assert ui.errors() == {
        f"activities-{row}-settings": [
            "completion: minSeconds: Must be a number of seconds greater than 0."
        ]
    }
    # The page keeps what was typed, for correcting it.
    assert json.loads(ui.field(f"activities-{row}-settings").input_value()) == {
        "completion": {"type": "time"}
    }
    assert not Activity.all_orgs.exists()
    assert Module.all_orgs.get() == module


def test_an_unknown_rule_type_is_refused_on_the_activity_page(admin_as, make_staff):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)
    activity = ActivityFactory(
        module=ModuleFactory(course=CourseFactory(org=org)), seq=1, settings=TIME_RULE
    )

    ui = admin_as(staff.user)
    ui.open_change(activity)
    ui.fill({"settings": {"completion": {"type": "bogus"}}})
    ui.save()

    assert "Please correct the error below." in ui.error_note()
    assert ui.errors() == {
        "settings": [
            "completion: Unknown completion rule type 'bogus'; expected one of: view, time, "
            "media, pages, score, reported."
        ]
    }
    activity.refresh_from_db()
    assert activity.settings == TIME_RULE
