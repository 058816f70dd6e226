"""Staff build a course in a real browser (its modules with their activities inside, an
activity's completion rule chosen and filled in), enroll a learner, and the learner sees it
over the API."""

from __future__ import annotations

from learn.models import Activity, Course, Enrollment, Module
from organizations.models import Membership
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
    # The module and its activity in one go: the activity is added inside its module.
    ui.page.locator("#modules-group a.djn-add-handler").last.click()
    ui.fill({"modules-0-seq": 1, "modules-0-title": "Getting started", "modules-0-published": True})
    ui.page.locator("#modules-0-activities-group a.djn-add-handler").click()
    ui.fill_inline(
        "modules-0-activities",
        0,
        {
            "seq": 1,
            "title": "Watch the intro",
            "published": True,
            "rule_type": "Time spent",
            "min_seconds": 60,
        },
    )
    ui.save_added("_continue")

    course = Course.all_orgs.get(title="Python basics")
    [module] = course.modules.all()
    assert (course.org_id, module.org_id, module.seq, module.published) == (
        org.id,
        org.id,
        1,
        True,
    )
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
    ui.save_added()
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

    assert report(45) == {"status": "in-progress", "progress": 0.75, "remaining": {"seconds": 15}}
    assert report(15) == {"status": "completed", "progress": 1.0, "remaining": None}


def test_a_rule_without_min_seconds_is_refused_on_the_course_page(admin_as, make_staff):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)
    module = ModuleFactory(course=CourseFactory(org=org, title="Python basics"), seq=1)

    ui = admin_as(staff.user)
    ui.open_change(module.course)
    ui.page.locator("#modules-0-activities-group a.djn-add-handler").click()
    ui.fill_inline(
        "modules-0-activities",
        0,
        {"seq": 1, "title": "Timed reading", "rule_type": "Time spent"},
    )
    ui.save()

    assert "Please correct the error below." in ui.error_note()
    assert ui.errors() == {
        "modules-0-activities-0-min_seconds": ["Must be a number of seconds greater than 0."]
    }
    # The page keeps what was chosen, for correcting it.
    assert ui.field("modules-0-activities-0-rule_type").input_value() == "time"
    assert ui.field("modules-0-activities-0-min_seconds").is_visible()
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
    assert ui.field("min_seconds").input_value() == "60"
    # The select offers the known rules only; a stale form or a hand-made request may still
    # send another type, which the server refuses on its own.
    ui.field("rule_type").evaluate(
        "select => { select.add(new Option('bogus', 'bogus')); select.value = 'bogus'; }"
    )
    ui.save()

    assert "Please correct the error below." in ui.error_note()
    assert ui.errors() == {
        "rule_type": ["Select a valid choice. bogus is not one of the available choices."]
    }
    activity.refresh_from_db()
    assert activity.settings == TIME_RULE
