"""9.7: the admin's invite form takes courses, of the invite's organization only (section 6):
a staff member is offered and may post only their organizations' courses; a superuser, who
sees every course, may not put another organization's course in an invite."""

from __future__ import annotations

import pytest

from organizations.models import Invite, Membership
from tests.helpers import admin_client
from tests.learn.factories import CourseFactory

pytestmark = pytest.mark.django_db

ADD = "/admin/organizations/invite/add/"


def form(org, *courses) -> dict:
    return {
        "org": str(org.id),
        "email": "grace@example.com",
        "first_name": "Grace",
        "last_name": "Hopper",
        "role": "learner",
        "expires_at_0": "2099-01-01",
        "expires_at_1": "10:00:00",
        "courses": [str(course.id) for course in courses],
    }


def test_staff_are_offered_and_may_choose_only_their_organizations_courses(org, other_org):
    mine = CourseFactory(org=org, title="Mine", published=False)
    theirs = CourseFactory(org=other_org, title="Theirs")
    client = admin_client(org, Membership.Role.ADMIN)

    page = client.get(ADD).content.decode()
    assert "Mine" in page and "Theirs" not in page

    refused = client.post(ADD, form(org, theirs))
    assert refused.status_code == 200
    assert "Select a valid choice" in refused.content.decode()
    assert not Invite.all_orgs.exists()

    saved = client.post(ADD, form(org, mine))
    assert saved.status_code == 302
    assert Invite.objects.for_org(org).get().course_ids == [mine.id]


def test_a_superuser_cannot_give_an_invite_another_organizations_course(org, other_org):
    theirs = CourseFactory(org=other_org, title="Theirs")
    client = admin_client()
    page = client.get(ADD).content.decode()
    assert f"Theirs ({other_org.name})" in page

    refused = client.post(ADD, form(org, theirs))
    assert refused.status_code == 200
    assert "Choose only courses of the invite" in refused.content.decode()
    assert not Invite.all_orgs.exists()


def test_the_change_page_names_the_courses(org):
    courses = [CourseFactory(org=org, title="Safety"), CourseFactory(org=org, title="Aid")]
    client = admin_client()
    client.post(ADD, form(org, *courses))
    invite = Invite.objects.for_org(org).get()
    page = client.get(f"/admin/organizations/invite/{invite.id}/change/").content.decode()
    assert "Aid, Safety" in page  # the form answers the chosen courses by title
