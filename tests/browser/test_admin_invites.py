"""Staff of one organization invite a person into a course from the admin, in a real
browser (CONTRACT 9.7, 9.2): the invite form offers their organization's courses only, the
token is shown once, and accepting it over the API lands the new member in the course.

With ``LMS_ADMIN_SCREENSHOTS=docs/admin`` the form and its answer are saved as screenshots
(``make screenshots``)."""

from __future__ import annotations

import re

from learn.models import Enrollment
from organizations.models import Invite, Membership
from tests.browser.test_admin_editors import shoot  # noqa: F401 (a fixture)
from tests.factories import OrganizationFactory
from tests.learn.factories import ActivityFactory, CourseFactory

RAW_INVITE = re.compile(r"inv_[A-Za-z0-9_-]{43}")


def test_staff_invite_a_person_into_a_course_of_their_organization(
    admin_as,
    make_staff,
    live_api,
    shoot,  # noqa: F811
):
    acme = OrganizationFactory(name="Acme Learning")
    rival = OrganizationFactory(name="Rival Academy")
    safety = CourseFactory(org=acme, title="Workplace safety")
    CourseFactory(org=acme, title="First aid (draft)", published=False)
    CourseFactory(org=rival, title="Rival onboarding")
    ActivityFactory(module__course=safety, org=acme)
    staff = make_staff(acme, Membership.Role.ADMIN, email="admin@acme.example")

    ui = admin_as(staff.user)
    ui.open_add("organizations", "invite")
    assert ui.select_options("org") == ["Acme Learning"]
    # Only their organization's courses, published or not.
    assert sorted(ui.select_options("courses")) == ["First aid (draft)", "Workplace safety"]
    ui.fill(
        {
            "org": "Acme Learning",
            "email": "grace@example.com",
            "first_name": "Grace",
            "last_name": "Hopper",
            "role": "Learner",
        }
    )
    ui.field("courses").select_option(label="Workplace safety")
    shoot(ui.page, "invite-with-courses")
    ui.save_added()

    [message] = [text for text in ui.messages() if "shown only this once" in text]
    [raw] = set(RAW_INVITE.findall(message))  # the token, and its lookup path
    invite = Invite.objects.for_org(acme).get(email="grace@example.com")
    assert invite.course_ids == [safety.id]

    # The change page names the courses and never the token.
    ui.open_change(invite)
    assert ui.readonly_value("course_titles") == "Workplace safety"
    assert raw not in ui.page.content()
    shoot(ui.page, "invite-courses-shown")

    # The invitee accepts over the API and is enrolled in the course at once.
    accepted = live_api.post(f"/api/organizations/invites/{raw}/accept")
    assert accepted.status == 201, accepted.body
    token = accepted.json()["token"]
    member = Membership.objects.for_org(acme).get(user__email="grace@example.com")
    assert list(
        Enrollment.objects.for_org(acme).filter(membership=member).values_list("course_id")
    ) == [(safety.id,)]
    courses = live_api.get("/api/learn/courses", token=token).json()["rows"]
    assert [course["title"] for course in courses] == ["Workplace safety"]
