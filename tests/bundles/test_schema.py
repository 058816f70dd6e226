"""The OpenAPI schema documents GET /api/bundles as it behaves."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    from django.test import Client

    with django_db_blocker.unblock():
        response = Client().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


def test_query_parameters_and_their_bounds(schema):
    params = {p["name"]: p for p in schema["paths"]["/api/bundles"]["get"]["parameters"]}
    assert set(params) == {"page", "pageSize", "search", "sort"}
    assert all(p["in"] == "query" and not p.get("required") for p in params.values())
    assert params["page"]["schema"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 9007199254740991,
        "default": 1,
    }
    assert params["pageSize"]["schema"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
        "default": 20,
    }
    assert params["search"]["schema"] == {
        "type": "string",
        "maxLength": 200,
        "pattern": "^[^\\u0000]*$",
    }
    assert params["sort"]["schema"]["default"] == "-createdAt"


def test_the_answer_is_the_envelope_of_bundles(schema):
    operation = schema["paths"]["/api/bundles"]["get"]
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    envelope = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(envelope["required"]) == {"rows", "total", "page", "pageSize"}
    assert envelope["properties"]["rows"]["type"] == "array"
    bundle_ref = envelope["properties"]["rows"]["items"]["$ref"]
    bundle = schema["components"]["schemas"][bundle_ref.rsplit("/", 1)[1]]
    assert set(bundle["properties"]) == {"orgId", "id", "name", "createdAt", "updatedAt"}
    assert bundle["properties"]["createdAt"]["format"] == "date-time"


def test_errors_and_bearer_auth_are_documented(schema):
    operation = schema["paths"]["/api/bundles"]["get"]
    assert {"400", "401"} <= set(operation["responses"])
    assert operation["security"] == [{"bearerAuth": []}]
