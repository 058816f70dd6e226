"""Every error, ours, DRF's or Django's, has the contract's body, status and request id."""

import json
import logging
import os

import pytest
from django.core.cache import cache
from django.test import Client

from harness.servers import run_django
from tests.helpers import assert_error

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.lms.probe_urls")]


def test_unknown_route_is_json_404(api):
    response = api.get("/api/nothing-here")
    assert_error(response, 404, "not_found")


def test_unknown_route_is_json_even_with_debug(api, settings):
    settings.DEBUG = True
    response = api.get("/no/such/page")
    assert_error(response, 404, "not_found")


def test_wrong_method_is_405(api, learner):
    response = api.delete("/probe/echo", token=learner.token)
    body = assert_error(response, 405, "method_not_allowed")
    assert "DELETE" in body["message"]


def test_unparsable_json_is_malformed_request(api, learner):
    response = api.post("/probe/echo", raw=b'{"pageSize": ', token=learner.token)
    assert_error(response, 400, "malformed_request")


@pytest.mark.parametrize("raw", [b"[1, 2]", b'"text"', b"42", b"null", b'{"a": NaN}'])
def test_json_that_is_not_an_object_is_malformed_request(api, learner, raw):
    response = api.post("/probe/echo", raw=raw, token=learner.token)
    assert_error(response, 400, "malformed_request")


def test_wrong_content_type_is_415(api, learner):
    response = api.post(
        "/probe/echo", raw=b"pageSize=3", content_type="text/plain", token=learner.token
    )
    assert_error(response, 415, "unsupported_media_type")


def test_form_body_is_415(api, learner):
    response = api.post(
        "/probe/echo",
        raw=b"pageSize=3",
        content_type="application/x-www-form-urlencoded",
        token=learner.token,
    )
    assert_error(response, 415, "unsupported_media_type")


def test_body_over_one_mebibyte_is_413(api, learner):
    big = b'{"pageSize": 1, "pad": "' + b"x" * (1024 * 1024) + b'"}'
    response = api.post("/probe/echo", raw=big, token=learner.token)
    assert_error(response, 413, "payload_too_large")


def test_body_just_under_the_limit_is_accepted(api, learner):
    head = b'{"pageSize": 1, "pad": "'
    pad = b"x" * (1024 * 1024 - len(head) - 2)
    response = api.post("/probe/echo", raw=head + pad + b'"}', token=learner.token)
    assert response.status_code == 201, response.content[:200]


def test_validation_error_names_the_field_in_details(api, learner):
    response = api.post("/probe/echo", {"pageSize": 101}, token=learner.token)
    body = assert_error(response, 400, "validation_error")
    assert list(body["details"]) == ["pageSize"]
    assert "pageSize" in body["message"]


def test_missing_field_is_validation_error(api, learner):
    response = api.post("/probe/echo", {}, token=learner.token)
    body = assert_error(response, 400, "validation_error")
    assert "pageSize" in body["details"]


def test_malformed_id_in_body_is_validation_error(api, learner):
    response = api.post("/probe/echo", {"pageSize": 1, "memberId": "nope"}, token=learner.token)
    body = assert_error(response, 400, "validation_error")
    assert list(body["details"]) == ["memberId"]


def test_role_refusal_is_403_permission_denied(api, learner):
    assert_error(api.get("/probe/owners-only", token=learner.token), 403, "permission_denied")


def test_role_allowed(api, owner):
    assert api.get("/probe/owners-only", token=owner.token).json() == {"ok": True}


def test_throttled_is_429_with_retry_after(api):
    cache.clear()
    for _ in range(2):
        assert api.get("/probe/throttled").status_code == 200
    response = api.get("/probe/throttled")
    assert_error(response, 429, "throttled")
    assert int(response["Retry-After"]) >= 1


def test_unhandled_exception_is_500_without_traceback(api, learner, caplog):
    with caplog.at_level(logging.ERROR, logger="lms.errors"):
        response = api.get("/probe/boom", token=learner.token)
    body = assert_error(response, 500, "internal_error")
    assert b"secret detail" not in response.content
    logged = [r for r in caplog.records if r.exc_info]
    assert logged and logged[0].request_id == body["requestId"]


@pytest.mark.parametrize("debug", [False, True])
def test_plain_django_view_failure_is_json_500(api, settings, debug):
    settings.DEBUG = debug
    response = api.get("/probe/plain-boom")
    assert_error(response, 500, "internal_error")
    assert b"plain django view failure" not in response.content


def test_an_admin_500_is_logged_with_its_traceback_and_request_id(caplog):
    """The admin keeps Django's own error page, and the failure is in the log all the same."""
    client = Client(raise_request_exception=False)
    with caplog.at_level(logging.ERROR):
        response = client.get("/admin/probe-boom", headers={"X-Request-ID": "admin-boom-1"})
    assert response.status_code == 500
    logged = [r for r in caplog.records if r.exc_info and r.levelno >= logging.ERROR]
    assert logged, [r.getMessage() for r in caplog.records]
    assert "plain django view failure" in str(logged[0].exc_info[1])
    assert logged[0].request_id == "admin-boom-1"


@pytest.mark.parametrize("pool", ["false", "true"])
@pytest.mark.processes
def test_unreachable_database_is_503_quickly(tmp_path, pool):
    """A separate process whose database URL points at a closed port, with and without the
    connection pool: each request answers 503 within a few seconds (the pool's wait is 2 s;
    it was 10 s), so that clients and load balancers learn it quickly, with Retry-After."""
    script = (
        "import json, time\n"
        "from django.conf import settings\n"
        "settings.ROOT_URLCONF = 'tests.lms.probe_urls'\n"
        "from django.test import Client\n"
        "c = Client(raise_request_exception=False)\n"
        "out = {}\n"
        "for url, headers in [\n"
        "    ('/probe/members/00000000-0000-0000-0000-000000000000',\n"
        "     {'Authorization': 'Bearer lms_x'}),\n"
        "    ('/readyz', {}), ('/healthz', {}),\n"
        "]:\n"
        "    started = time.monotonic()\n"
        "    r = c.get(url, headers=headers)\n"
        "    took = time.monotonic() - started\n"
        "    out[url] = [r.status_code, r.json(), r.get('X-Request-ID'), took,\n"
        "                r.get('Retry-After')]\n"
        "started = time.monotonic()\n"
        "r = c.post('/admin/login/', {'username': 'staff@example.com', 'password': 'x'})\n"
        "out['admin'] = [r.status_code, r.content.decode(), time.monotonic() - started,\n"
        "                r.get('Retry-After')]\n"
        "print(json.dumps(out))\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "lms.settings",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:1/unreachable",
        "LMS_DB_POOL": pool,
        "LMS_LOG_LEVEL": "CRITICAL",
    }
    results = json.loads(run_django(script, env, timeout=60).strip().splitlines()[-1])
    for url in ("/probe/members/00000000-0000-0000-0000-000000000000", "/readyz"):
        status, body, request_id, took, retry_after = results[url]
        assert status == 503 and retry_after == "5"  # CONTRACT 7.0
        assert took < 6, f"{url} waited {took:.1f} s for its 503"
        assert body["error"] == "service_unavailable"
        assert body["requestId"] == request_id
    assert results["/healthz"][0] == 200
    # A staff member signing in meanwhile is told to retry, as API clients are: not a 500.
    status, text, took, retry_after = results["admin"]
    assert status == 503 and "retry" in text and retry_after == "5"
    assert took < 6


def test_a_domain_validation_error_is_answered_with_wire_names(api, learner):
    """A service's ``ValidationError`` keyed by Python field names answers a 400 whose
    details carry the wire's names (``lms.errors.WIRE_NAMES``); a JSON path keeps its tail."""
    from django.core.exceptions import ValidationError

    from lms.errors import to_api_error

    error, _ = to_api_error(
        ValidationError(
            {
                "display_names": ["x is not linked."],
                "__all__": ["Whole."],
                "conditions.courseIds.0": ["No such course."],
            }
        )
    )
    assert (error.status, error.code) == (400, "validation_error")
    assert error.details == {
        "displayNames": ["x is not linked."],
        "nonFieldErrors": ["Whole."],
        "conditions.courseIds.0": ["No such course."],
    }
    plain, _ = to_api_error(ValidationError("Plain."))
    assert plain.details == {"nonFieldErrors": ["Plain."]}
