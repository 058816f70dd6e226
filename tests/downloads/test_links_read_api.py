"""8.4 GET /api/downloads/{downloadId}/assets: a download's links, for any member."""

import pytest

from tests.downloads.factories import DownloadFactory, link, link_new
from tests.downloads.wire import LINK_FIELDS
from tests.helpers import assert_error, assert_foreign_looks_missing

pytestmark = pytest.mark.django_db

MISSING = "00000000-0000-7000-8000-000000000000"
# The token, then the links: a download with links exists in the organization.
READ_QUERIES = 2
# The token, the links (none), then the download itself.
READ_EMPTY_QUERIES = 3


def links_url(download_id) -> str:
    return f"/api/downloads/{download_id}/assets"


@pytest.mark.parametrize("member", ["owner", "admin_member", "instructor", "learner"])
def test_any_member_reads_the_links_in_seq_order(request, api, download, member):
    assets = link_new(download, 3)
    caller = request.getfixturevalue(member)
    response = api.get(links_url(download.id), token=caller.token)
    assert response.status_code == 200, response.content
    body = response.json()
    assert [item["assetId"] for item in body] == [str(a.id) for a in assets]
    assert [item["seq"] for item in body] == [1, 2, 3]
    assert all(set(item) == LINK_FIELDS for item in body)


def test_the_answer_is_the_array_link_and_unlink_answer(api, owner, learner, download, assets):
    link(download, *assets[:3])
    unlinked = api.delete(f"{links_url(download.id)}/{assets[0].id}", token=owner.token)
    assert unlinked.status_code == 200
    read = api.get(links_url(download.id), token=learner.token)
    assert read.json() == unlinked.json()
    relinked = api.post(links_url(download.id), {"assetId": str(assets[1].id)}, token=owner.token)
    assert relinked.status_code == 200
    assert api.get(links_url(download.id), token=learner.token).json() == relinked.json()


def test_a_download_without_links_answers_an_empty_array(api, learner, download):
    response = api.get(links_url(download.id), token=learner.token)
    assert (response.status_code, response.json()) == (200, [])


def test_another_downloads_links_are_not_listed(api, learner, org, download, assets):
    link(download, assets[0])
    link(DownloadFactory(org=org), assets[1])
    body = api.get(links_url(download.id), token=learner.token).json()
    assert [item["assetId"] for item in body] == [str(assets[0].id)]


def test_unknown_and_foreign_downloads_look_missing(api, learner, foreign_download, other_org):
    link_new(foreign_download, 2)
    assert_foreign_looks_missing(
        api, "GET", links_url(foreign_download.id), links_url(MISSING), token=learner.token
    )


@pytest.mark.parametrize("malformed", ["not-a-uuid", "1", MISSING.replace("-", "")])
def test_a_malformed_download_id_is_an_unknown_download(api, learner, malformed):
    expected = assert_error(api.get(links_url(MISSING), token=learner.token), 404, "not_found")
    found = assert_error(api.get(links_url(malformed), token=learner.token), 404, "not_found")
    assert found["message"] == expected["message"]


def test_without_a_token_it_is_401_before_anything(api, download):
    assert_error(api.get(links_url(download.id)), 401, "unauthenticated")
    assert_error(api.get(links_url("not-a-uuid")), 401, "unauthenticated")


def test_a_learner_still_cannot_link(api, learner, download, asset):
    """Reading is for any member; writing stays with the staff roles."""
    response = api.post(links_url(download.id), {"assetId": str(asset.id)}, token=learner.token)
    assert_error(response, 403, "permission_denied")


@pytest.mark.parametrize("count", [1, 30])
def test_queries_are_constant_whatever_the_number_of_links(
    api, learner, download, django_assert_num_queries, count
):
    link_new(download, count)
    with django_assert_num_queries(READ_QUERIES):
        response = api.get(links_url(download.id), token=learner.token)
    assert len(response.json()) == count


def test_an_empty_download_costs_one_more_query(api, learner, download, django_assert_num_queries):
    with django_assert_num_queries(READ_EMPTY_QUERIES):
        response = api.get(links_url(download.id), token=learner.token)
    assert response.json() == []


def test_the_schema_documents_the_read_for_any_member():
    from django.test import Client

    schema = Client().get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/downloads/{downloadId}/assets"]["get"]
    assert operation["operationId"] == "list_download_assets"
    ok = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"type": "array", "items": {"$ref": "#/components/schemas/DownloadAssetLink"}}
    assert {"401", "404"} <= set(operation["responses"])
    assert "409" not in operation["responses"] and "400" not in operation["responses"]
    assert "409" in schema["paths"]["/api/downloads/{downloadId}/assets"]["post"]["responses"]
