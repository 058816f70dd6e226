"""A training manager reads a course's report in a real browser (9.7): from the course's page
to its report, the counts, the funnel chart drawn by the server, the roster's filters, and
the CSV downloaded with the filters applied. With ``LMS_ADMIN_SCREENSHOTS=docs/admin`` the
page is saved as docs/admin/course-report.png."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

from django.utils import timezone

from learn.services import enroll_members
from organizations.models import Membership
from tests.browser.test_admin_editors import shoot  # noqa: F401 (a fixture)
from tests.factories import OrganizationFactory
from tests.helpers import make_member
from tests.learn.factories import ActivityFactory, CourseFactory, ModuleFactory

RULE = {"completion": {"type": "time", "minSeconds": 60}}
PEOPLE = [
    # (first name, seconds spent on each of the three activities, overdue)
    ("Ada", (60, 60, 60), False),
    ("Grace", (60, 60, 60), False),
    ("Alan", (60, 60, 0), False),
    ("Edsger", (60, 30, 0), True),
    ("Barbara", (30, 0, 0), False),
    ("Ken", (0, 0, 0), True),
    ("Frances", (0, 0, 0), False),
]


def test_a_manager_reads_the_report_filters_the_roster_and_downloads_it(
    admin_as,
    make_staff,
    live_api,
    shoot,  # noqa: F811
    tmp_path,
):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.ADMIN)
    course = CourseFactory(org=org, title="Workplace safety")
    module = ModuleFactory(course=course, seq=1, title="On site")
    titles = ["Hazards", "Protective equipment", "Emergencies"]
    activities = [
        ActivityFactory(module=module, seq=n, title=title, settings=RULE)
        for n, title in enumerate(titles, start=1)
    ]
    yesterday, next_month = timezone.now() - timedelta(days=1), timezone.now() + timedelta(days=30)
    for name, seconds, overdue in PEOPLE:
        member = make_member(org, user__first_name=name, user__email=f"{name.lower()}@acme.example")
        enroll_members(
            org_id=org.id,
            course_id=course.id,
            membership_ids=[member.membership.id],
            due_at=yesterday if overdue else next_month,
        )
        for activity, spent in zip(activities, seconds, strict=True):
            if spent:
                body = {
                    "activity": str(activity.id),
                    "reports": [{"type": "time", "seconds": spent}],
                }
                assert live_api.post("/api/learn/progress", body, token=member.token).status == 200

    ui = admin_as(staff.user)
    ui.open_change(course)
    ui.page.get_by_role("link", name="Report", exact=True).click()
    ui.page.wait_for_url(f"**/admin/learn/course/{course.pk}/report/")
    counts = {
        box.get_attribute("data-count"): box.locator("dd").inner_text()
        for box in ui.page.locator(".lms-count").all()
    }
    assert counts == {
        "enrolled": "7",
        "not-started": "2",
        "in-progress": "3",
        "completed": "2",
        "overdue": "2",
        "completion-rate": "28.6%",
    }
    # The chart: one row per activity, its bars as long as its share of the enrolled.
    rows = ui.page.locator("svg.lms-funnel .lms-funnel-row")
    assert rows.count() == 3
    figures = [
        (row.get_attribute("data-started"), row.get_attribute("data-completed"))
        for row in rows.all()
    ]
    assert figures == [("5", "4"), ("4", "3"), ("2", "2")]
    widths = [
        float(row.locator("rect.lms-bar-started").get_attribute("width")) for row in rows.all()
    ]
    assert widths[0] > widths[1] > widths[2] > 0
    assert ui.page.locator("svg.lms-funnel text", has_text="Protective equipment").count() == 1
    enrol = ui.page.get_by_role("link", name="Enrol members")
    assert enrol.get_attribute("href") == f"/admin/learn/course/{course.pk}/enrol/"
    shoot(ui.page, "course-report")

    # The roster's filters.
    assert ui.page.locator("tr.lms-roster-row").count() == 7
    ui.page.select_option("select[name=status]", "in-progress")
    ui.follow(ui.page.get_by_role("button", name="Filter"))
    shown = ui.page.locator("tr.lms-roster-row td:first-child").all_inner_texts()
    assert sorted(shown) == ["alan@acme.example", "barbara@acme.example", "edsger@acme.example"]
    ui.page.select_option("select[name=overdue]", "true")
    ui.follow(ui.page.get_by_role("button", name="Filter"))
    assert ui.page.locator("tr.lms-roster-row td:first-child").all_inner_texts() == [
        "edsger@acme.example"
    ]
    ui.page.select_option("select[name=overdue]", "")
    ui.page.fill("input[name=search]", "BAR")
    ui.follow(ui.page.get_by_role("button", name="Filter"))
    assert ui.page.locator("tr.lms-roster-row td:first-child").all_inner_texts() == [
        "barbara@acme.example"
    ]

    # Download CSV: the rows the filters select (here: in progress, any name).
    ui.page.fill("input[name=search]", "")
    ui.follow(ui.page.get_by_role("button", name="Filter"))
    with ui.page.expect_download() as started:
        ui.page.get_by_role("link", name="Download CSV").click()
    download = started.value
    assert download.suggested_filename == f"{course.pk}-enrollments.csv"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    text = saved.read_text(encoding="utf-8-sig")
    table = list(csv.DictReader(io.StringIO(text, newline="")))
    assert sorted(row["email"] for row in table) == [
        "alan@acme.example",
        "barbara@acme.example",
        "edsger@acme.example",
    ]
    by_email = {row["email"]: row for row in table}
    assert by_email["alan@acme.example"]["progress"] == "0.667"
    assert by_email["edsger@acme.example"]["overdue"] == "true"
    assert by_email["barbara@acme.example"]["status"] == "in-progress"
