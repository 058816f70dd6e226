"""9.4's roster as CSV (Accept: text/csv on GET /api/learn/courses/{courseId}/enrollments),
over real HTTP to the live server: every row the filters and sort select whatever the
paging, the JSON rows' values as cells, formula-looking names neutralised, and errors as
JSON."""

from __future__ import annotations

import csv
import io

import pytest

from learn.services import enroll_members
from organizations.models import Membership
from tests.helpers import make_member
from tests.learn.factories import CourseFactory

pytestmark = pytest.mark.django_db(transaction=True)

CSV = {"Accept": "text/csv"}
HOSTILE = '=HYPERLINK("https://evil.example","click")'


def url(course) -> str:
    return f"/api/learn/courses/{course.id}/enrollments"


@pytest.fixture
def roster(org):
    course = CourseFactory(org=org, published=False)  # staff read unpublished courses too
    names = ["Ada", HOSTILE, "-Minus", 'Zoë, Quoted "Q"']
    members = [make_member(org, user__first_name=name) for name in names]
    enroll_members(
        org_id=org.id, course_id=course.id, membership_ids=[m.membership.id for m in members]
    )
    return course, members


def parsed(body: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(body.decode("utf-8-sig"), newline="")))


def test_every_row_as_csv_the_same_values_as_the_json_rows(live, owner, roster):
    course, members = roster
    response = live.request("GET", url(course), token=owner.token, headers=CSV,
                            query={"pageSize": 1, "sort": "email"})  # fmt: skip
    assert response.status == 200, response.body[:300]
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.headers["content-disposition"] == (
        f'attachment; filename="{course.id}-enrollments.csv"'
    )
    rows = parsed(response.body)
    json_rows = live.get(url(course), token=owner.token, query={"sort": "email"}).json()["rows"]
    assert [row["memberId"] for row in rows] == [row["memberId"] for row in json_rows]
    assert len(rows) == len(members)  # paging ignored
    header = response.body.decode("utf-8-sig").split("\r\n")[0].split(",")
    assert header == list(json_rows[0])
    for row, body in zip(rows, json_rows, strict=True):
        assert row["email"] == body["email"] and row["status"] == body["status"]
        assert row["enrolledAt"] == body["enrolledAt"] and row["dueAt"] == ""
        assert row["overdue"] == "false" and float(row["progress"]) == body["progress"]
    first_names = {row["firstName"] for row in rows}
    assert "'" + HOSTILE in first_names and "'-Minus" in first_names
    assert 'Zoë, Quoted "Q"' in first_names


def test_the_filters_apply_and_a_bad_one_is_a_json_400(live, owner, roster):
    course, members = roster
    found = live.request("GET", url(course), token=owner.token, headers=CSV,
                         query={"search": "zoë"})  # fmt: skip
    assert [row["memberId"] for row in parsed(found.body)] == [str(members[3].membership.id)]
    bad = live.request("GET", url(course), token=owner.token, headers=CSV,
                       query={"status": "done"})  # fmt: skip
    assert bad.status == 400 and bad.headers["content-type"] == "application/json"
    assert list(bad.json()["details"]) == ["status"]


def test_errors_stay_json(live, org, other_org, roster):
    course, _ = roster
    learner = make_member(org, Membership.Role.LEARNER)
    denied = live.request("GET", url(course), token=learner.token, headers=CSV)
    assert (denied.status, denied.json()["error"]) == (403, "permission_denied")
    stranger = make_member(other_org, Membership.Role.OWNER)
    missing = live.request("GET", url(course), token=stranger.token, headers=CSV)
    assert (missing.status, missing.json()["error"]) == (404, "not_found")
