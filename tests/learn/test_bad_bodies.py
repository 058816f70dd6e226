"""Bodies the parser must refuse with the contract's error body (never a 500), decided
before anything is stored, and stored reports the admin must always be able to show."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from django.core.signals import request_started
from django.db import close_old_connections, connection
from django.test import Client

from learn.models import Progress, ProgressReport
from lms.web.parsers import MAX_JSON_DEPTH
from tests.factories import UserFactory
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db

URL = "/api/learn/progress"


def post_text(api, member, text: str, content_type: str = "application/json"):
    return api.request("POST", URL, raw=text, token=member.token, content_type=content_type)


def body_with(activity, reports_json: str) -> str:
    return f'{{"activity": "{activity.id}", "reports": {reports_json}}}'


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_deep_nesting_is_malformed_and_nothing_is_stored(api, enrolled, make_activity, depth):
    activity = make_activity({"type": "reported"})
    text = body_with(activity, "[{" + '"x": ' + "[" * depth + "]" * depth + "}]")
    body = assert_error(post_text(api, enrolled, text), 400, "malformed_request")
    assert str(MAX_JSON_DEPTH) in body["message"]
    assert not Progress.all_orgs.exists()


def test_nesting_up_to_the_limit_is_accepted(api, enrolled, make_activity):
    activity = make_activity({"type": "reported"})
    # The body (1) and the reports array (2) and the report (3) count toward the limit.
    inner = MAX_JSON_DEPTH - 3
    text = body_with(activity, '[{"x": ' + "[" * inner + "]" * inner + "}]")
    assert post_text(api, enrolled, text).status_code == 200
    text = body_with(activity, '[{"x": ' + "[" * (inner + 1) + "]" * (inner + 1) + "}]")
    assert_error(post_text(api, enrolled, text), 400, "malformed_request")


def test_brackets_inside_strings_do_not_count(api, enrolled, make_activity):
    activity = make_activity({"type": "reported"})
    text = body_with(activity, '[{"type": "note", "text": "' + "[{" * 500 + '\\" ]"}]')
    assert post_text(api, enrolled, text).status_code == 200
    assert ProgressReport.all_orgs.get().payload["text"] == "[{" * 500 + '" ]'


@pytest.mark.parametrize("literal", ["1e999", "-1e999", "NaN", "Infinity", "-Infinity"])
def test_numbers_json_cannot_carry_are_refused(api, enrolled, make_activity, literal):
    activity = make_activity({"type": "reported"})
    text = body_with(activity, f'[{{"type": "note", "value": {literal}}}]')
    assert_error(post_text(api, enrolled, text), 400, "malformed_request")
    assert not ProgressReport.all_orgs.exists()


def test_a_large_but_finite_number_is_kept(api, enrolled, make_activity):
    activity = make_activity({"type": "reported"})
    text = body_with(activity, '[{"type": "note", "value": 1e308}]')
    assert post_text(api, enrolled, text).status_code == 200
    assert ProgressReport.all_orgs.get().payload == {"type": "note", "value": 1e308}


def call_wsgi(method: str, path: str, body: bytes, **environ) -> tuple[int, dict]:
    """The production WSGI application (``lms.wsgi``), called as a server calls it."""
    from lms.wsgi import application

    answer: dict = {}

    def start_response(status, headers, exc_info=None):
        answer["status"] = int(status.split()[0])

    base = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "search=python",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "HTTP_HOST": "testserver",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": io.StringIO(),
        "CONTENT_LENGTH": str(len(body)),
    }
    base.update(environ)
    with kept_connection():
        content = b"".join(application(base, start_response))
    return answer["status"], json.loads(content) if content.startswith(b"{") else content


@contextlib.contextmanager
def kept_connection():
    """As Django's test client does: the test's transaction holds the connection, so the
    handler must not close it when a request starts."""
    request_started.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)


@pytest.mark.parametrize("charset", ["rot13", "base64", "zlib_codec", "hex", "no-such-charset"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_charset_that_is_not_a_text_encoding_is_415(enrolled, make_activity, charset, method):
    activity = make_activity({"type": "reported"})
    status, body = call_wsgi(
        method,
        URL if method == "POST" else "/api/bundles",
        body_with(activity, "[]").encode(),
        CONTENT_TYPE=f"application/json; charset={charset}",
        HTTP_AUTHORIZATION=f"Bearer {enrolled.token}",
    )
    assert status == 415
    assert body["error"] == "unsupported_media_type" and "charset" in body["message"]
    assert not Progress.all_orgs.exists()


@pytest.mark.parametrize("charset", ["latin-1", "utf-16"])
def test_a_text_charset_other_than_utf_8_is_415(enrolled, make_activity, charset):
    """CONTRACT section 5: utf-8 or us-ascii, or none; any other charset, text or not, is 415."""
    activity = make_activity({"type": "reported"})
    text = body_with(activity, '[{"type": "note", "text": "caf\u00e9"}]')
    status, body = call_wsgi(
        "POST",
        URL,
        text.encode(charset),
        CONTENT_TYPE=f"application/json; charset={charset}",
        HTTP_AUTHORIZATION=f"Bearer {enrolled.token}",
    )
    assert status == 415, body
    assert body["error"] == "unsupported_media_type"
    assert not ProgressReport.all_orgs.exists()


def test_a_utf_8_charset_is_read(enrolled, make_activity):
    activity = make_activity({"type": "reported"})
    text = body_with(activity, '[{"type": "note", "text": "caf\u00e9"}]')
    status, body = call_wsgi(
        "POST",
        URL,
        text.encode("utf-8"),
        CONTENT_TYPE="application/json; charset=UTF-8",
        HTTP_AUTHORIZATION=f"Bearer {enrolled.token}",
    )
    assert status == 200, body
    assert ProgressReport.all_orgs.get().payload["text"] == "caf\u00e9"


def test_an_admin_form_with_a_bad_charset_is_415_not_a_500(db):
    status, _ = call_wsgi(
        "POST",
        "/admin/login/",
        b"username=a&password=b",
        CONTENT_TYPE="application/x-www-form-urlencoded; charset=rot13",
    )
    assert status == 415


def post_chunked(member, activity, reports_json: str, **environ):
    """A progress report as gunicorn hands over a ``Transfer-Encoding: chunked`` body: no
    Content-Length, the decoded body (and ``wsgi.input_terminated`` where it says so)."""
    return call_wsgi(
        "POST",
        URL,
        body_with(activity, reports_json).encode(),
        CONTENT_TYPE="application/json",
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
        HTTP_AUTHORIZATION=f"Bearer {member.token}",
        **environ,
    )


def test_a_chunked_body_marked_terminated_is_read(enrolled, make_activity):
    """Django alone would read such a body as empty."""
    activity = make_activity({"type": "reported"})
    status, body = post_chunked(
        enrolled, activity, '[{"type": "complete"}]', **{"wsgi.input_terminated": True}
    )
    assert (status, body) == (200, {"status": "completed", "progress": 1.0, "remaining": None})


def test_a_chunked_body_a_server_did_not_terminate_is_411(enrolled, make_activity):
    activity = make_activity({"type": "reported"})
    status, body = post_chunked(enrolled, activity, "[]")
    assert status == 411 and body["error"] == "length_required"
    assert not Progress.all_orgs.exists()


def test_the_admin_shows_a_report_stored_deeper_than_the_limit(api, enrolled, make_activity):
    """A report stored before the nesting limit (here written straight to its column) still
    opens in the admin, on its own page and on the learner's progress page."""
    activity = make_activity({"type": "reported"})
    assert post_text(api, enrolled, body_with(activity, '[{"type": "note"}]')).status_code == 200
    report = ProgressReport.all_orgs.get()
    deep = '{"type": "note", "x": ' + "[" * 990 + "]" * 990 + "}"
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {ProgressReport._meta.db_table} SET payload = %s WHERE id = %s",
            [deep, ProgressReport._meta.pk.get_db_prep_value(report.pk, connection)],
        )
    staff = Client()
    staff.force_login(UserFactory(is_staff=True, is_superuser=True))
    for url in (
        f"/admin/learn/progressreport/{report.pk}/change/",
        f"/admin/learn/progress/{report.progress_id}/change/",
    ):
        response = staff.get(url)
        assert response.status_code == 200, url
        assert "[" * 990 in response.content.decode(), url
    assert staff.get("/admin/learn/progressreport/").status_code == 200
