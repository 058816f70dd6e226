"""The OpenAPI schema documents both operations as they behave."""

import pytest

from tests.downloads.wire import LINK_FIELDS

pytestmark = pytest.mark.django_db


@pytest.fixture
def paths(api) -> dict:
    return api.get("/api/schema/", query={"format": "json"}).json()["paths"]


def test_link_operation_is_documented(paths):
    post = paths["/api/downloads/{downloadId}/assets"]["post"]
    assert {"200", "201", "400", "401", "403", "404", "409"} <= set(post["responses"])
    for code in ("200", "201"):
        schema = post["responses"][code]["content"]["application/json"]["schema"]
        assert schema["type"] == "array"
        assert schema["items"]["$ref"].endswith("/DownloadAssetLink")
    assert [p["name"] for p in post["parameters"]] == ["downloadId"]
    assert post["requestBody"]["required"] is True


def test_unlink_operation_is_documented(paths):
    delete = paths["/api/downloads/{downloadId}/assets/{assetId}"]["delete"]
    assert {"200", "401", "403", "404", "409"} <= set(delete["responses"])
    assert "201" not in delete["responses"]
    assert {p["name"] for p in delete["parameters"]} == {"downloadId", "assetId"}


def test_link_and_input_shapes(api):
    schemas = api.get("/api/schema/", query={"format": "json"}).json()["components"]["schemas"]
    link = schemas["DownloadAssetLink"]
    assert set(link["properties"]) == LINK_FIELDS
    request = schemas["LinkAssetInputRequest"]
    assert request["required"] == ["assetId"]
    assert request["properties"]["assetId"]["format"] == "uuid"
