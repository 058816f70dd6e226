"""Staff enrol members from a course's page in a real browser (CONTRACT 9.7): the "Enrol
members" form takes e-mail addresses, one a line, and a due date, enrols through the
enrolment service, and says who was enrolled, who already was, and which addresses are no
member's. The API then answers the new learners.

With ``LMS_ADMIN_SCREENSHOTS=docs/admin`` the result is saved as a screenshot
(``make screenshots``)."""

from __future__ import annotations

from datetime import UTC, datetime

from django.urls import reverse

from learn.models import Enrollment
from lms.events import Event
from organizations.models import Membership
from tests.browser.test_admin_editors import shoot  # noqa: F401 (a fixture)
from tests.factories import OrganizationFactory, UserFactory
from tests.helpers import make_member
from tests.learn.factories import ActivityFactory, CourseFactory

DUE = datetime(2099, 1, 31, 17, 0, tzinfo=UTC)


def test_staff_enrol_three_members_with_a_due_date_from_the_course_page(
    admin_as,
    make_staff,
    live_api,
    shoot,  # noqa: F811
    recorded_events: list[Event],
):
    org = OrganizationFactory(name="Acme Learning")
    other = OrganizationFactory(name="Rival Academy")
    staff = make_staff(org, Membership.Role.ADMIN)
    course = ActivityFactory(org=org, module__course=CourseFactory(org=org, title="Safety")).course
    learners = [
        make_member(org, user=UserFactory(email=f"{name}@acme.example"))
        for name in ("ada", "grace", "alan", "edsger")
    ]
    Enrollment.objects.create(org=org, course=course, membership=learners[3].membership)
    make_member(other, user=UserFactory(email="barbara@rival.example"))

    ui = admin_as(staff.user)
    ui.open_change(course)
    ui.follow(ui.page.get_by_role("link", name="Enrol members"))
    assert ui.path == reverse("admin:learn_course_enrol", args=[course.pk])
    ui.fill(
        {
            # Any case, blank lines and a repeat; one member enrolled already, one address of
            # another organization's member.
            "emails": "ADA@acme.example\n\ngrace@acme.example\n  alan@acme.example \n"
            "ada@acme.example\nedsger@acme.example\nbarbara@rival.example",
            "due_at": "2099-01-31T17:00",
        }
    )
    ui.follow(ui.page.get_by_role("button", name="Enrol"))

    def listed(list_id: str) -> list[str]:
        return ui.page.locator(f"#{list_id} li").all_inner_texts()

    assert listed("enrolled") == ["ADA@acme.example", "grace@acme.example", "alan@acme.example"]
    assert listed("already-enrolled") == ["edsger@acme.example"]
    assert listed("not-members") == ["barbara@rival.example"]
    shoot(ui.page, "course-enrol-members")

    rows = Enrollment.objects.for_org(org).filter(course=course)
    due = {row.membership_id: row.due_at for row in rows}
    assert due == {
        **{learner.membership.id: DUE for learner in learners[:3]},
        learners[3].membership.id: DUE,  # a given due date replaces theirs too
    }
    created = [e for e in recorded_events if e.type == "enrollment.created"]
    assert sorted(e.data["email"] for e in created) == [
        "ada@acme.example",
        "alan@acme.example",
        "grace@acme.example",
    ]
    for learner in learners[:3]:
        response = live_api.get(f"/api/learn/courses/{course.id}/progress", token=learner.token)
        assert response.status == 200 and response.json()["status"] == "not-started"


def test_another_organizations_course_has_no_enrol_page(admin_as, make_staff):
    org, other = OrganizationFactory(), OrganizationFactory()
    staff = make_staff(org, Membership.Role.OWNER)
    foreign = CourseFactory(org=other)
    ui = admin_as(staff.user)
    response = ui.goto(reverse("admin:learn_course_enrol", args=[foreign.pk]))
    assert response.status == 404
