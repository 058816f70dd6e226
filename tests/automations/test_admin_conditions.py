"""Aiming an automation in the admin (issue 28, CONTRACT 8.7): a multi-select of the
organization's courses stored as ``conditions.courseIds``, its problems beside it."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from automations.models import Automation
from organizations.models import Membership
from tests.automations.factories import AutomationFactory, editor_fields
from tests.factories import UserFactory
from tests.helpers import admin_client, make_member
from tests.learn.factories import ActivityFactory, CourseFactory

pytestmark = pytest.mark.django_db

ADD = "/admin/automations/automation/add/"
EMAIL = {"to": "learner", "subject": "Well done", "body": ""}


def post_data(org, **fields) -> dict:
    data = {"org": str(org.pk), "name": "Congratulate", "trigger": "course.completed"}
    return data | editor_fields([{"type": "send_email", "input": EMAIL}]) | fields


def course_options(page: str) -> list[str]:
    select = re.search(r'<select name="conditions".*?</select>', page, re.S).group(0)
    return re.findall(r"<option[^>]*>(.*?)</option>", select)


def test_the_courses_offered_are_the_staff_members_organizations_only(org, other_org):
    CourseFactory(org=org, title="Mine")
    CourseFactory(org=other_org, title="Theirs")
    staff = admin_client(org)
    assert course_options(staff.get(ADD).content.decode()) == ["Mine"]
    automation = AutomationFactory(org=org)
    page = staff.get(f"/admin/automations/automation/{automation.pk}/change/").content.decode()
    assert course_options(page) == ["Mine"]


def test_chosen_courses_are_stored_as_course_ids_and_shown_chosen(org):
    python, sql = CourseFactory(org=org, title="Python"), CourseFactory(org=org, title="SQL")
    CourseFactory(org=org, title="Go")
    staff = admin_client(org)
    response = staff.post(ADD, post_data(org, conditions=[str(python.id), str(sql.id)]))
    assert response.status_code == 302, response.context["adminform"].form.errors
    automation = Automation.objects.for_org(org).get()
    assert sorted(automation.conditions["courseIds"]) == sorted([str(python.id), str(sql.id)])
    change = f"/admin/automations/automation/{automation.pk}/change/"
    page = staff.get(change).content.decode()
    assert re.search(rf'<option value="{python.id}" selected>Python</option>', page)
    assert re.search(rf'<option value="{sql.id}" selected>SQL</option>', page)

    # None chosen: every course; an activity condition set over the API is kept.
    activity = str(ActivityFactory(module__course=python).id)
    Automation.objects.for_org(org).update(
        conditions={"courseIds": [str(python.id)], "activityIds": [activity]}
    )
    data = post_data(org, trigger="activity.completed")
    del data["org"]
    response = staff.post(change, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Automation.objects.for_org(org).get().conditions == {"activityIds": [activity]}


def test_a_course_of_another_organization_or_a_trigger_without_courses_is_refused_beside_it(
    org, other_org
):
    theirs = CourseFactory(org=other_org, title="Theirs")
    mine = CourseFactory(org=org, title="Mine")
    user = UserFactory(is_staff=True)
    make_member(org, Membership.Role.OWNER, user=user)
    make_member(other_org, Membership.Role.OWNER, user=user)  # offered both organizations'
    staff = Client()
    staff.force_login(user)

    response = staff.post(ADD, post_data(org, conditions=[str(theirs.id)]))
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["conditions"]
    assert "No course with this id" in errors["conditions"][0]

    response = staff.post(ADD, post_data(org, trigger="invite.accepted", conditions=[str(mine.id)]))
    assert list(response.context["adminform"].form.errors) == ["conditions"]
    page = response.content.decode()
    assert re.search(r'id="id_conditions_error"', page)
    assert not Automation.all_orgs.exists()
