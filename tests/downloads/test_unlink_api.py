"""4.2 DELETE /api/downloads/{downloadId}/assets/{assetId}: unlink an asset."""

import uuid

import pytest

from downloads.models import Asset, DownloadAsset
from tests.downloads.factories import DownloadFactory, link, link_new
from tests.helpers import assert_error, assert_foreign_looks_missing

pytestmark = pytest.mark.django_db

MISSING = "00000000-0000-7000-8000-000000000000"
# Token, savepoint, lock the download, the links, the delete, two renumbering updates,
# release. Unlinking the last link needs no renumbering.
UNLINK_QUERIES = 8
UNLINK_LAST_QUERIES = 6


def link_url(download_id, asset_id) -> str:
    return f"/api/downloads/{download_id}/assets/{asset_id}"


def pairs(response) -> list[tuple[str, int]]:
    return [(x["assetId"], x["seq"]) for x in response.json()]


def test_unlink_answers_the_rest_renumbered_in_previous_order(api, owner, download, assets):
    link(download, *assets)
    response = api.delete(link_url(download.id, assets[1].id), token=owner.token)

    assert response.status_code == 200
    kept = [assets[0], *assets[2:]]
    assert pairs(response) == [(str(a.id), n) for n, a in enumerate(kept, 1)]
    stored = DownloadAsset.all_orgs.filter(download=download).order_by("seq")
    assert [(x.asset_id, x.seq) for x in stored] == [(a.id, n) for n, a in enumerate(kept, 1)]


def test_unlink_of_the_first_and_the_last(api, owner, download, assets):
    link(download, *assets[:4])
    api.delete(link_url(download.id, assets[0].id), token=owner.token)
    response = api.delete(link_url(download.id, assets[3].id), token=owner.token)
    assert pairs(response) == [(str(assets[1].id), 1), (str(assets[2].id), 2)]


def test_unlink_of_the_only_link_answers_an_empty_list(api, owner, download, asset):
    link(download, asset)
    response = api.delete(link_url(download.id, asset.id), token=owner.token)
    assert (response.status_code, response.json()) == (200, [])


def test_renumbered_links_keep_their_ids_names_and_creation_time(api, owner, download, assets):
    before = {x.id: x for x in link(download, *assets[:3])}
    response = api.delete(link_url(download.id, assets[0].id), token=owner.token)
    for item in response.json():
        old = before[uuid.UUID(item["id"])]
        assert item["displayName"] == old.display_name
        assert item["createdAt"] == old.created_at.isoformat().replace("+00:00", "Z")
        assert item["updatedAt"] > item["createdAt"]


def test_the_answer_is_what_is_stored_and_links_before_the_gap_are_not_written(
    api, owner, download, assets
):
    """The answer is computed from what was read under the lock, not read again: it must
    match the rows, timestamps included; only the links after the gap were written."""
    before = {x.id: x for x in link(download, *assets[:5])}
    response = api.delete(link_url(download.id, assets[2].id), token=owner.token)
    stored = DownloadAsset.all_orgs.filter(download=download).order_by("seq")
    assert response.json() == [
        {
            "orgId": str(x.org_id),
            "id": str(x.id),
            "downloadId": str(x.download_id),
            "assetId": str(x.asset_id),
            "seq": x.seq,
            "displayName": x.display_name,
            "createdAt": x.created_at.isoformat().replace("+00:00", "Z"),
            "updatedAt": x.updated_at.isoformat().replace("+00:00", "Z"),
        }
        for x in stored
    ]
    assert [x.updated_at == before[x.id].updated_at for x in stored] == [True, True, False, False]


def test_the_asset_still_exists_untouched_after_unlink(api, owner, download, asset):
    link(download, asset)
    before = Asset.all_orgs.values().get(id=asset.id)
    response = api.delete(link_url(download.id, asset.id), token=owner.token)
    assert response.status_code == 200
    assert Asset.all_orgs.values().get(id=asset.id) == before


def test_unlink_leaves_other_downloads_alone(api, owner, org, download, asset):
    other = DownloadFactory(org=org)
    link(download, asset)
    link(other, asset)
    api.delete(link_url(download.id, asset.id), token=owner.token)
    assert DownloadAsset.all_orgs.filter(download=other, asset=asset, seq=1).exists()


def test_link_after_unlink_appends_without_a_gap(api, owner, download, assets):
    link(download, *assets[:3])
    api.delete(link_url(download.id, assets[0].id), token=owner.token)
    response = api.post(
        f"/api/downloads/{download.id}/assets", {"assetId": str(assets[0].id)}, token=owner.token
    )
    assert response.status_code == 201
    assert pairs(response) == [
        (str(assets[1].id), 1),
        (str(assets[2].id), 2),
        (str(assets[0].id), 3),
    ]


def test_unlink_of_an_asset_that_is_not_linked_is_404(api, owner, download, assets):
    link(download, assets[0])
    response = api.delete(link_url(download.id, assets[1].id), token=owner.token)
    assert_error(response, 404, "not_found")
    assert DownloadAsset.all_orgs.count() == 1


def test_second_unlink_is_404(api, owner, download, asset):
    link(download, asset)
    assert api.delete(link_url(download.id, asset.id), token=owner.token).status_code == 200
    assert_error(api.delete(link_url(download.id, asset.id), token=owner.token), 404, "not_found")


def test_unknown_and_foreign_download_look_the_same(
    api, owner, asset, foreign_download, foreign_asset
):
    link(foreign_download, foreign_asset)
    assert_foreign_looks_missing(
        api,
        "DELETE",
        link_url(foreign_download.id, foreign_asset.id),
        link_url(MISSING, foreign_asset.id),
        token=owner.token,
    )
    assert DownloadAsset.all_orgs.filter(download=foreign_download).count() == 1


def test_unknown_and_foreign_asset_look_the_same(api, owner, download, asset, foreign_asset):
    link(download, asset)
    assert_foreign_looks_missing(
        api,
        "DELETE",
        link_url(download.id, foreign_asset.id),
        link_url(download.id, MISSING),
        token=owner.token,
    )
    assert DownloadAsset.all_orgs.filter(download=download).count() == 1


def test_foreign_token_cannot_unlink_our_link(api, other_owner, download, asset):
    link(download, asset)
    response = api.delete(link_url(download.id, asset.id), token=other_owner.token)
    assert_error(response, 404, "not_found")
    assert DownloadAsset.all_orgs.count() == 1


@pytest.mark.parametrize(
    "bad", ["nope", "123", MISSING[:-1], MISSING + "0", MISSING.upper(), MISSING.replace("-", "")]
)
def test_malformed_ids_in_path_are_404(api, owner, download, asset, bad):
    link(download, asset)
    assert_error(api.delete(link_url(bad, asset.id), token=owner.token), 404, "not_found")
    assert_error(api.delete(link_url(download.id, bad), token=owner.token), 404, "not_found")
    assert DownloadAsset.all_orgs.count() == 1


@pytest.mark.parametrize("role", ["owner", "admin_member", "instructor"])
def test_staff_roles_may_unlink(api, request, role, download, asset):
    link(download, asset)
    member = request.getfixturevalue(role)
    assert api.delete(link_url(download.id, asset.id), token=member.token).status_code == 200


def test_learner_is_forbidden(api, learner, download, asset):
    link(download, asset)
    response = api.delete(link_url(download.id, asset.id), token=learner.token)
    assert_error(response, 403, "permission_denied")
    assert DownloadAsset.all_orgs.count() == 1


def test_learner_is_forbidden_even_for_a_missing_download(api, learner):
    assert_error(
        api.delete(link_url(MISSING, MISSING), token=learner.token), 403, "permission_denied"
    )


def test_no_token_is_401(api, download, asset):
    link(download, asset)
    assert_error(api.delete(link_url(download.id, asset.id)), 401, "unauthenticated")


@pytest.mark.parametrize("count", [3, 30])
@pytest.mark.parametrize("which, queries", [(0, UNLINK_QUERIES), (-1, UNLINK_LAST_QUERIES)])
def test_unlink_query_count_is_constant(
    api, owner, download, django_assert_num_queries, count, which, queries
):
    """Unlinking the first link renumbers the rest; the last, none: neither costs more with
    more links."""
    linked = link_new(download, count)
    with django_assert_num_queries(queries):
        response = api.delete(link_url(download.id, linked[which].id), token=owner.token)
    assert [x["seq"] for x in response.json()] == list(range(1, count))
