"""A course's report page in the admin (9.7) and its CSV, served by Django: counts and
roster rows that agree with what each learner is told (7.4), the roster's filters, the
download's rows, and tenancy (another organization's course is a 404)."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from learn.services import enroll_members, unenroll
from lms.web.csv_export import BOM
from organizations.models import Membership
from tests.helpers import admin_client, make_member
from tests.learn.factories import ActivityFactory, CourseFactory
from tests.learn.progress import report

pytestmark = pytest.mark.django_db


def report_url(course) -> str:
    return f"/admin/learn/course/{course.pk}/report/"


@pytest.fixture
def world(api, org, course, module):
    """Five learners of a two-activity course (time rules): done (completed), halfway (one
    of two), opened (a report, nothing completed), idle (nothing) and late (nothing, due
    yesterday); and one enrolled then unenrolled, whose progress counts nowhere."""
    rule = {"completion": {"type": "time", "minSeconds": 60}}
    first, second = (ActivityFactory(module=module, seq=n, settings=rule) for n in (1, 2))
    names = ["done", "halfway", "opened", "idle", "late", "gone"]
    members = {
        name: make_member(org, user__email=f"{name}@example.com", user__first_name=name.title())
        for name in names
    }
    ids = [members[name].membership.id for name in names]
    enroll_members(org_id=org.id, course_id=course.id, membership_ids=ids[:4] + ids[5:])
    yesterday = timezone.now() - timedelta(days=1)
    enroll_members(org_id=org.id, course_id=course.id, membership_ids=[ids[4]], due_at=yesterday)
    complete = {"type": "time", "seconds": 60}
    report(api, members["done"], first, complete)
    report(api, members["done"], second, complete)
    report(api, members["halfway"], second, complete)
    report(api, members["opened"], first, {"type": "time", "seconds": 5})
    report(api, members["gone"], first, complete)
    unenroll(org_id=org.id, course_id=course.id, membership_id=members["gone"].membership.id)
    return {"members": members, "activities": [first, second]}


def counts(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-count="([a-z-]+)"><dt>[^<]*</dt><dd>([^<]*)</dd>', html))


def test_the_page_counts_the_enrolled_by_status_and_draws_the_funnel(org, course, world):
    page = admin_client(org).get(report_url(course))
    assert page.status_code == 200
    html = page.content.decode()
    assert counts(html) == {
        "enrolled": "5",
        "not-started": "2",
        "in-progress": "2",
        "completed": "1",
        "overdue": "1",
        "completion-rate": "20.0%",
    }
    first, second = world["activities"]
    funnel = re.findall(
        r'data-activity="([^"]+)" data-started="(\d+)" data-completed="(\d+)"', html
    )
    assert funnel == [(str(first.id), "2", "1"), (str(second.id), "2", "2")]
    assert "<script" not in html.split('id="content-main"')[1]  # the chart is the server's SVG


def test_every_roster_row_agrees_with_what_the_learner_is_told(api, org, course, world):
    html = admin_client(org).get(report_url(course)).content.decode()
    shown = dict(
        re.findall(r'<td>([a-z]+)@example.com</td>.*?class="lms-status-([a-z-]+)"', html, re.S)
    )
    assert set(shown) == {"done", "halfway", "opened", "idle", "late"}
    for name, status in shown.items():
        told = api.get(
            f"/api/learn/courses/{course.id}/progress", token=world["members"][name].token
        ).json()
        assert status == told["status"], name


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"status": "completed"}, {"done"}),
        ({"status": "in-progress"}, {"halfway", "opened"}),
        ({"status": "not-started"}, {"idle", "late"}),
        ({"overdue": "true"}, {"late"}),
        ({"overdue": "false"}, {"done", "halfway", "opened", "idle"}),
        ({"search": "HALF"}, {"halfway"}),
        ({"search": "example.com", "status": "not-started", "overdue": "false"}, {"idle"}),
    ],
)
def test_the_rosters_filters(org, course, world, query, expected):
    html = admin_client(org).get(report_url(course), query).content.decode()
    assert set(re.findall(r"<td>([a-z]+)@example.com</td>", html)) == expected


def test_the_csv_has_every_selected_row_as_the_roster_answers_them(api, org, course, world):
    client = admin_client(org)
    response = client.get(f"/admin/learn/course/{course.pk}/report/enrollments.csv")
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="{course.pk}-enrollments.csv"'
    text = b"".join(response.streaming_content).decode()
    assert text.startswith(BOM)
    rows = list(csv.DictReader(io.StringIO(text[1:], newline="")))
    assert list(rows[0]) == [
        "memberId", "email", "firstName", "lastName", "enrolledAt", "dueAt",
        "status", "progress", "completedAt", "lastActivityAt", "overdue",
    ]  # fmt: skip
    by_email = {row["email"]: row for row in rows}
    assert set(by_email) == {
        f"{n}@example.com" for n in ("done", "halfway", "opened", "idle", "late")
    }
    for name in ("done", "halfway", "opened", "idle", "late"):
        member = world["members"][name]
        told = api.get(f"/api/learn/courses/{course.id}/progress", token=member.token).json()
        row = by_email[f"{name}@example.com"]
        assert row["memberId"] == str(member.membership.id)
        assert (row["status"], float(row["progress"]), row["completedAt"] or None) == (
            told["status"],
            told["progress"],
            told["completedAt"],
        )
        assert row["overdue"] == ("true" if name == "late" else "false")
    assert by_email["idle@example.com"]["lastActivityAt"] == ""
    assert by_email["late@example.com"]["dueAt"].endswith("Z")
    filtered = client.get(
        f"/admin/learn/course/{course.pk}/report/enrollments.csv", {"status": "in-progress"}
    )
    text = b"".join(filtered.streaming_content).decode()
    assert len(list(csv.DictReader(io.StringIO(text[1:], newline="")))) == 2


def test_the_change_page_links_to_the_report_and_the_report_to_the_enrol_form(org, course):
    client = admin_client(org)
    html = client.get(f"/admin/learn/course/{course.pk}/change/").content.decode()
    assert report_url(course) in html
    report = client.get(report_url(course)).content.decode()
    assert f'href="{reverse("admin:learn_course_enrol", args=[course.pk])}"' in report
    assert "Enrol members" in report


def test_another_organizations_course_is_not_found(org, other_org, course, world):
    theirs = CourseFactory(org=other_org)
    client = admin_client(org)
    assert client.get(report_url(theirs)).status_code == 404
    assert client.get(f"/admin/learn/course/{theirs.pk}/report/enrollments.csv").status_code == 404
    outsider = admin_client(other_org, Membership.Role.ADMIN)
    assert outsider.get(report_url(course)).status_code == 404
    assert admin_client().get(report_url(course)).status_code == 200  # a superuser sees all


def test_the_page_reads_in_a_bounded_number_of_queries(
    org, course, world, django_assert_max_num_queries
):
    client = admin_client(org)
    client.get(report_url(course))
    with django_assert_max_num_queries(12) as few:
        client.get(report_url(course))
    more = [make_member(org) for _ in range(20)]
    enroll_members(
        org_id=org.id, course_id=course.id, membership_ids=[m.membership.id for m in more]
    )
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert client.get(report_url(course)).status_code == 200
