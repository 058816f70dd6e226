"""The CSV download machinery (lms.web.csv_export): cells as JSON answers them with formulas
neutralised, RFC 4180 text, a body streamed a chunk at a time, and content negotiation on a
probe view of this module (JSON by default, CSV to Accept: text/csv, errors JSON always)."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import path
from rest_framework.views import APIView

from learn.serializers import ACTIVITY
from lms.errors import validation_error
from lms.tenancy import OrgScopedViewMixin
from lms.web import csv_export
from lms.web.csv_export import (
    CsvErrorsAsJson,
    cell,
    cells,
    csv_chunks,
    csv_response,
    wants_csv,
)
from lms.web.renderers import rendered
from organizations.models import Membership
from organizations.permissions import IsOrgAdmin
from tests.browser.live_api import LiveApi
from tests.helpers import assert_error, make_member
from tests.learn.factories import ActivityFactory

HEADER = ["memberId", "email", "firstName", "lastName"]


class MembersView(CsvErrorsAsJson, OrgScopedViewMixin, APIView):
    """A probe: the organization's members as JSON, or as CSV to Accept: text/csv."""

    model = Membership
    permission_classes = [IsOrgAdmin]

    def get(self, request):
        if "fail" in request.query_params:
            raise validation_error({"fail": ["Asked to fail."]})
        rows = (
            self.scoped()
            .order_by("user__email")
            .values_list("id", "user__email", "user__first_name", "user__last_name")
        )
        if wants_csv(request):
            cells = ([cell(str(row[0])), *map(cell, row[1:])] for row in rows.iterator())
            return csv_response(HEADER, cells, filename="members.csv")
        return rendered(request, [dict(zip(HEADER, map(str, row), strict=True)) for row in rows])

    def post(self, request):
        return rendered(request, {"posted": True})


urlpatterns = [path("api/probe/members", MembersView.as_view())]
URL = "/api/probe/members"


def parsed(body: bytes) -> list[list[str]]:
    text = body.decode("utf-8")
    assert text.startswith(csv_export.BOM)
    return list(csv.reader(io.StringIO(text[1:], newline="")))


# --- cells ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (None, ""),
        (True, "true"),
        (False, "false"),
        (0.5, "0.5"),
        (1.0, "1.0"),
        (0.0, "0.0"),
        (3, "3"),
        ({"a": [1, "=x"]}, '{"a":[1,"=x"]}'),
        ("", ""),
        ("Ada", "Ada"),
        ("2026-11-27T11:00:00Z", "2026-11-27T11:00:00Z"),
        ('=HYPERLINK("https://evil.example","x")', '\'=HYPERLINK("https://evil.example","x")'),
        ("+1 555", "'+1 555"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tcmd", "'\tcmd"),
        ("\rcmd", "'\rcmd"),
        ("a=b", "a=b"),
        ("'quoted", "'quoted"),
        (" =x", " =x"),
    ],
)
def test_a_cell_is_the_json_value_as_text_and_never_a_formula(value, written):
    assert cell(value) == written


def test_the_file_is_rfc_4180_with_a_bom_and_a_header():
    rows = [
        ["1", 'say "hi"', "a,b", "two\nlines"],
        ["2", "Zoë", "", "'\rcarriage"],
    ]
    body = b"".join(csv_chunks(HEADER, rows))
    assert body.startswith(b"\xef\xbb\xbfmemberId,email,firstName,lastName\r\n")
    assert b'"say ""hi"""' in body and b'"a,b"' in body and b'"two\nlines"' in body
    assert body.endswith(b"\r\n")
    assert parsed(body) == [HEADER, *rows]


def test_the_body_is_written_while_the_rows_are_read():
    """Flat memory: the rows are read a chunk ahead of what was sent, never all at once."""
    pulled = 0

    def rows():
        nonlocal pulled
        for n in range(csv_export.CHUNK_ROWS * 3 + 1):
            pulled += 1
            yield [str(n)]

    chunks = csv_chunks(["n"], rows())
    first = next(chunks)
    assert pulled == csv_export.CHUNK_ROWS
    assert first.count(b"\r\n") == csv_export.CHUNK_ROWS + 1  # the header too
    rest = list(chunks)
    assert len(rest) == 3 and pulled == csv_export.CHUNK_ROWS * 3 + 1
    assert len(parsed(first + b"".join(rest))) == csv_export.CHUNK_ROWS * 3 + 2


@pytest.mark.django_db
def test_a_shapes_rows_are_the_cells_of_its_json_bodies(org):
    activity = ActivityFactory(org=org, module__course__org=org, settings={"pages": 3})
    row = type(activity).all_orgs.filter(id=activity.id).values_list(*ACTIVITY.columns).get()
    body = ACTIVITY.body(row)
    [written] = list(cells(ACTIVITY, [row]))
    assert written == [cell(value) for value in body.values()]
    assert written[ACTIVITY.names.index("settings")] == '{"pages":3}'
    assert written[ACTIVITY.names.index("id")] == str(activity.id)


# --- negotiation, over the probe view -----------------------------------------------------------

pytestmark_urls = pytest.mark.urls("tests.lms.test_csv_export")


@pytestmark_urls
@pytest.mark.django_db
@pytest.mark.parametrize(
    "accept",
    [None, "*/*", "application/json", "text/html", "image/png", "text/csv, application/json"],
)
def test_json_stays_the_default(api, owner, accept):
    headers = {"Accept": accept} if accept else None
    response = api.get(URL, token=owner.token, headers=headers)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json()[0]["memberId"] == str(owner.membership.id)
    assert "Accept" in response["Vary"]


@pytestmark_urls
@pytest.mark.django_db
@pytest.mark.parametrize(
    "accept", ["text/csv", "text/csv; charset=utf-8", "text/csv, text/plain;q=0.5"]
)
def test_csv_is_answered_to_accept_text_csv(api, org, owner, accept):
    hostile = make_member(org, user__first_name='=HYPERLINK("https://x.example","y")')
    response = api.get(URL, token=owner.token, headers={"Accept": accept})
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="members.csv"'
    rows = parsed(b"".join(response.streaming_content))
    assert rows[0] == HEADER
    by_id = {row[0]: row for row in rows[1:]}
    assert by_id[str(hostile.membership.id)][2] == '\'=HYPERLINK("https://x.example","y")'
    assert by_id[str(owner.membership.id)][1] == owner.user.email


@pytestmark_urls
@pytest.mark.django_db
def test_errors_stay_json_when_csv_was_asked_for(api, org, owner):
    csv_headers = {"Accept": "text/csv"}
    assert_error(api.get(URL, headers=csv_headers), 401, "unauthenticated")
    learner = make_member(org)
    assert_error(api.get(URL, token=learner.token, headers=csv_headers), 403, "permission_denied")
    response = api.get(URL, token=owner.token, headers=csv_headers, query={"fail": "1"})
    assert list(assert_error(response, 400, "validation_error")["details"]) == ["fail"]


@pytestmark_urls
@pytest.mark.django_db(transaction=True)
def test_the_download_over_http_is_chunked_and_whole(live_server, org, owner):
    for _ in range(5):
        make_member(org)
    live = LiveApi(live_server.url)
    response = live.request("GET", URL, token=owner.token, headers={"Accept": "text/csv"})
    assert response.status == 200, response.body[:300]
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert len(parsed(response.body)) == 1 + 6


@pytestmark_urls
@pytest.mark.django_db
def test_a_post_answers_json_even_to_accept_text_csv(api, owner):
    response = api.post(URL, {}, token=owner.token, headers={"Accept": "text/csv"})
    assert (response.status_code, response.json()) == (200, {"posted": True})


def test_the_rows_are_read_in_the_context_of_the_request():
    """The body is written after the view returned and the middleware reset the request's
    context variables (its routing state, its id); the rows see them as they were."""
    import contextvars

    seen = contextvars.ContextVar("seen", default="outside")
    token = seen.set("the request's")
    try:
        response = csv_response(["who"], ([seen.get()] for _ in range(2)), filename="x.csv")
    finally:
        seen.reset(token)
    body = parsed(b"".join(response.streaming_content))
    assert body == [["who"], ["the request's"], ["the request's"]]
