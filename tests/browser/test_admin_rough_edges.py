"""The admin's first minutes for staff: an add form starts in their organization, an invite
starts as sent by them, the progress list fits a 1,440 px screen, and a course is previewed
as a learner sees it without enrolling anyone (so no automation fires).

With ``LMS_ADMIN_SCREENSHOTS=docs/admin`` these tests also save their screenshots."""

from __future__ import annotations

from django.utils import timezone

from automations.models import AutomationRun
from learn.models import Enrollment, Progress
from organizations.models import Invite, Membership
from tests.automations.factories import AutomationFactory
from tests.browser.test_admin_editors import shoot  # noqa: F401 (a fixture)
from tests.factories import OrganizationFactory
from tests.helpers import make_member
from tests.learn.factories import ActivityFactory, CourseFactory, ModuleFactory

WIDE = {"width": 1440, "height": 900}


def test_an_add_form_starts_in_the_staff_users_one_organization(admin_as, make_staff):
    org = OrganizationFactory(name="Acme Learning")
    OrganizationFactory(name="Other Org")
    staff = make_staff(org, Membership.Role.ADMIN)
    ui = admin_as(staff.user)
    for app, model in [("learn", "course"), ("bundles", "bundle"), ("organizations", "invite")]:
        ui.open_add(app, model)
        assert ui.field("org").input_value() == str(org.id), (app, model)


def test_a_superuser_of_one_organization_starts_there_and_of_none_chooses(
    admin_as, make_staff, superuser
):
    org = OrganizationFactory(name="Acme Learning")
    OrganizationFactory(name="Other Org")
    ui = admin_as(superuser.user)
    ui.open_add("learn", "course")
    assert ui.field("org").input_value() == ""
    Membership.all_orgs.create(org=org, user=superuser.user, role=Membership.Role.OWNER)
    ui.open_add("learn", "course")
    assert ui.field("org").input_value() == str(org.id)


def test_an_invite_starts_as_sent_by_the_staff_user(admin_as, make_staff, shoot):  # noqa: F811
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)
    make_member(org, Membership.Role.ADMIN)
    ui = admin_as(staff.user)
    mine = Membership.all_orgs.get(user=staff.user)
    ui.open_add("organizations", "invite")
    assert ui.field("invited_by").input_value() == str(mine.id)
    shoot(ui.page, "invite-add")
    ui.fill({"email": "new@acme.example", "first_name": "Nia", "last_name": "New"})
    ui.save_added()
    assert Invite.all_orgs.get(email="new@acme.example").invited_by_id == mine.id


def test_the_progress_list_fits_a_1440_px_screen(admin_as, superuser, shoot):  # noqa: F811
    orgs = [OrganizationFactory(name=f"Northwind Institute of Learning {n}") for n in (1, 2)]
    for index, org in enumerate(orgs):
        course = CourseFactory(org=org, title="Python for data analysis and visualisation")
        module = ModuleFactory(course=course, title="Working with tabular data")
        activity = ActivityFactory(
            module=module, title="Reading and cleaning a large CSV file with pandas"
        )
        for n in range(3):
            member = make_member(
                org, user__email=f"a.very.long.learner.name.{index}{n}@northwind-institute.example"
            )
            Progress.all_orgs.create(
                org=org,
                membership=member.membership,
                activity=activity,
                status=Progress.Status.IN_PROGRESS,
                progress=0.5,
                started_at=timezone.now(),
            )
    ui = admin_as(superuser.user)
    ui.page.set_viewport_size(WIDE)
    # With the navigation sidebar open, as a new staff user first sees it.
    ui.page.add_init_script("localStorage.setItem('django.admin.navSidebarIsOpen', 'true')")
    ui.open_changelist("learn", "progress")
    assert len(ui.changelist_rows()) == 6
    shoot(ui.page, "progress-list")
    # Neither the page nor the list's own box scrolls sideways: every column is in view.
    widths = ui.page.evaluate(
        """() => {
            const page = document.documentElement, list = document.querySelector(".results");
            return [page.scrollWidth, page.clientWidth, list.scrollWidth, list.clientWidth];
        }"""
    )
    assert widths[0] <= widths[1] and widths[2] <= widths[3], widths
    header = ui.page.locator("#result_list thead th").all_inner_texts()
    assert [h.strip().lower() for h in header] == [
        "learner",
        "activity",
        "status",
        "progress",
        "started",
        "completed",
        "org",
    ]


def test_a_course_is_previewed_as_a_learner_sees_it_without_enrolling(
    admin_as,
    make_staff,
    shoot,  # noqa: F811
):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)
    AutomationFactory(org=org, trigger="enrollment.created")
    course = CourseFactory(org=org, title="Python basics", published=True)
    first = ModuleFactory(course=course, seq=1, title="Getting started", published=True)
    ActivityFactory(
        module=first,
        seq=1,
        title="Watch the intro",
        published=True,
        settings={"completion": {"type": "time", "minSeconds": 60}},
    )
    ActivityFactory(module=first, seq=2, title="Draft quiz", published=False)
    ModuleFactory(course=course, seq=2, title="Unfinished module", published=False)

    ui = admin_as(staff.user)
    ui.open_change(course)
    ui.page.get_by_role("link", name="Preview as a learner").click()
    ui.page.wait_for_url(f"**/learn/course/{course.pk}/preview/")
    text = ui.main_text()
    shoot(ui.page, "course-preview")
    assert "1. Getting started" in text and "Watch the intro" in text
    assert "Time spent" in text and '"seconds": 60' in text
    assert "Draft quiz" not in text.split("What the learner")[0]
    assert "Unfinished module" not in text
    # The body the learner's client reads, as the API builds it for a member at the start.
    assert '"status": "not-started"' in text
    # Nobody was enrolled, so the enrollment automation did not run.
    assert not Enrollment.all_orgs.exists() and not AutomationRun.all_orgs.exists()


def test_an_unpublished_course_is_previewed_as_not_shown(admin_as, make_staff):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)
    course = CourseFactory(org=org, title="Python basics", published=False)
    ui = admin_as(staff.user)
    ui.goto(f"/admin/learn/course/{course.pk}/preview/")
    assert "This course is not published" in ui.main_text()
    other = CourseFactory(org=OrganizationFactory(), published=True)
    assert ui.goto(f"/admin/learn/course/{other.pk}/preview/").status == 404
