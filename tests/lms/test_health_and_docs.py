import logging

import pytest
from django.test import Client

from tests.helpers import assert_error

pytestmark = pytest.mark.django_db


def test_healthz(api):
    response = api.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_readyz_checks_the_database(api, django_assert_num_queries):
    with django_assert_num_queries(1):
        response = api.get("/readyz")
    assert response.json() == {"status": "ok", "database": "ok"}


@pytest.mark.urls("tests.lms.probe_urls")
def test_schema_is_json_and_documents_errors_and_bearer_auth(api):
    response = api.get("/api/schema/", query={"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert {"error", "message", "requestId"} <= set(
        schema["components"]["schemas"]["Error"]["properties"]
    )
    echo = schema["paths"]["/probe/echo"]["post"]["responses"]
    assert {"201", "400", "401", "403", "413", "415", "500", "503"} <= set(echo)
    error_ref = echo["400"]["content"]["application/json"]["schema"]["$ref"]
    assert error_ref == "#/components/schemas/Error"
    assert "X-Request-ID" in echo["201"]["headers"]


def test_swagger_ui_is_served_without_a_cdn(api):
    response = api.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html


def test_admin_login_page_is_html(api):
    response = api.get("/admin/login/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")


@pytest.fixture
def strict():
    """A client as a browser or a script is: the CSRF check applies (Django's test client
    skips it by default)."""
    return Client(enforce_csrf_checks=True, raise_request_exception=False)


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_the_probes_answer_405_to_methods_they_do_not_serve(strict, caplog, path, method):
    """CONTRACT 7.0: 405 method_not_allowed with Allow, not the CSRF check's 403 and its
    WARNING line (anyone could fill the log with them)."""
    with caplog.at_level(logging.WARNING):
        response = strict.generic(method, path)
    assert_error(response, 405, "method_not_allowed")
    assert response["Allow"] == "GET, HEAD"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("configured", [True, False])
def test_metrics_without_its_token_answers_any_method_as_an_unknown_route(
    strict, caplog, settings, method, configured
):
    settings.LMS_METRICS_TOKEN = "metrics-token-of-the-test" if configured else ""
    with caplog.at_level(logging.WARNING):
        for headers in ({}, {"Authorization": "Bearer another"}):
            metrics = strict.generic(method, "/metrics", headers=headers)
            unknown = strict.generic(method, "/no-such-route", headers=headers)
            assert (metrics.status_code, metrics["Content-Type"]) == (
                unknown.status_code,
                unknown["Content-Type"],
            )
            assert metrics.status_code == 404
            assert {**metrics.json(), "requestId": ""} == {**unknown.json(), "requestId": ""}
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
