import pytest

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
