"""4.1 POST /api/downloads/{downloadId}/assets: link an asset to a download."""

import re
import uuid

import pytest

from downloads.models import Asset, DownloadAsset
from downloads.serializers import DownloadAssetSerializer
from tests.downloads.factories import AssetFactory, DownloadFactory, link, link_new
from tests.downloads.wire import LINK_FIELDS
from tests.helpers import assert_error, assert_foreign_looks_missing

pytestmark = pytest.mark.django_db

MISSING = "00000000-0000-7000-8000-000000000000"
UTC_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
# Token, savepoint, lock the download, the links, the asset, the insert, release.
LINK_QUERIES = 7
# Token, savepoint, lock the download, the links, release: a linked asset is known to be
# in the organization, so a re-link reads no asset (was 6 with the asset read).
RELINK_QUERIES = 5


def links_url(download_id) -> str:
    return f"/api/downloads/{download_id}/assets"


def body(asset) -> dict:
    return {"assetId": str(asset.id)}


def test_link_answers_201_with_the_new_link(api, owner, org, download, asset):
    response = api.post(links_url(download.id), body(asset), token=owner.token)

    assert response.status_code == 201
    [item] = response.json()
    assert set(item) == LINK_FIELDS
    stored = DownloadAsset.all_orgs.get()
    assert item == {
        "orgId": str(org.id),
        "id": str(stored.id),
        "downloadId": str(download.id),
        "assetId": str(asset.id),
        "seq": 1,
        "displayName": "Cheat sheet.pdf",
        "createdAt": item["createdAt"],
        "updatedAt": item["updatedAt"],
    }
    assert UTC_Z.fullmatch(item["createdAt"]) and UTC_Z.fullmatch(item["updatedAt"])


def test_display_name_defaults_to_the_assets_name(api, owner, download, asset):
    asset.name = "Week 1 slides"
    asset.save()
    response = api.post(links_url(download.id), body(asset), token=owner.token)
    assert response.json()[0]["displayName"] == "Week 1 slides"


def test_display_name_can_be_given(api, owner, download, asset):
    response = api.post(
        links_url(download.id),
        {"assetId": str(asset.id), "displayName": "  Slides  "},
        token=owner.token,
    )
    assert response.status_code == 201
    assert response.json()[0]["displayName"] == "Slides"


def test_null_display_name_means_the_default(api, owner, download, asset):
    response = api.post(
        links_url(download.id), {"assetId": str(asset.id), "displayName": None}, token=owner.token
    )
    assert response.json()[0]["displayName"] == asset.name


def test_relink_answers_200_with_the_same_list_and_no_duplicate(api, owner, download, asset):
    first = api.post(links_url(download.id), body(asset), token=owner.token)
    again = api.post(links_url(download.id), body(asset), token=owner.token)

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    assert DownloadAsset.all_orgs.count() == 1


def test_relink_ignores_a_new_display_name(api, owner, download, asset):
    api.post(links_url(download.id), body(asset), token=owner.token)
    again = api.post(
        links_url(download.id),
        {"assetId": str(asset.id), "displayName": "Other"},
        token=owner.token,
    )
    assert again.status_code == 200
    assert again.json()[0]["displayName"] == asset.name


def test_links_are_appended_and_the_whole_list_is_answered_by_seq(api, owner, download, assets):
    for asset in assets[:3]:
        response = api.post(links_url(download.id), body(asset), token=owner.token)

    items = response.json()
    assert [x["seq"] for x in items] == [1, 2, 3]
    assert [x["assetId"] for x in items] == [str(a.id) for a in assets[:3]]


def test_relink_of_a_middle_asset_keeps_order(api, owner, download, assets):
    link(download, *assets[:3])
    response = api.post(links_url(download.id), body(assets[1]), token=owner.token)
    assert response.status_code == 200
    assert [(x["assetId"], x["seq"]) for x in response.json()] == [
        (str(a.id), n) for n, a in enumerate(assets[:3], 1)
    ]


def test_other_downloads_links_are_not_listed(api, owner, org, download, asset):
    other = DownloadFactory(org=org)
    link(other, AssetFactory(org=org))
    response = api.post(links_url(download.id), body(asset), token=owner.token)
    assert [x["downloadId"] for x in response.json()] == [str(download.id)]


def test_one_asset_may_be_linked_to_several_downloads(api, owner, org, download, asset):
    other = DownloadFactory(org=org)
    first = api.post(links_url(download.id), body(asset), token=owner.token)
    second = api.post(links_url(other.id), body(asset), token=owner.token)
    assert (first.status_code, second.status_code) == (201, 201)
    assert second.json()[0]["seq"] == 1


@pytest.mark.parametrize("role", ["owner", "admin_member", "instructor"])
def test_staff_roles_may_link(api, request, role, download, asset):
    member = request.getfixturevalue(role)
    assert api.post(links_url(download.id), body(asset), token=member.token).status_code == 201


def test_learner_is_forbidden(api, learner, download, asset):
    response = api.post(links_url(download.id), body(asset), token=learner.token)
    assert_error(response, 403, "permission_denied")
    assert not DownloadAsset.all_orgs.exists()


def test_role_is_checked_before_the_body(api, learner, download):
    response = api.post(links_url(download.id), {"assetId": 42}, token=learner.token)
    assert_error(response, 403, "permission_denied")


def test_no_token_is_401(api, download, asset):
    response = api.post(links_url(download.id), body(asset))
    assert_error(response, 401, "unauthenticated")
    assert response["WWW-Authenticate"] == "Bearer"


BAD_ASSET_IDS = [
    pytest.param({}, id="missing"),
    pytest.param({"assetId": None}, id="null"),
    pytest.param({"assetId": 42}, id="number"),
    pytest.param({"assetId": 1.5}, id="float"),
    pytest.param({"assetId": True}, id="boolean"),
    pytest.param({"assetId": "not-a-uuid"}, id="malformed-string"),
    pytest.param({"assetId": ""}, id="empty-string"),
    pytest.param({"assetId": MISSING + "0"}, id="too-long"),
    pytest.param({"assetId": MISSING.replace("-", "")}, id="no-hyphens"),
    pytest.param({"assetId": "urn:uuid:" + MISSING}, id="urn"),
    pytest.param({"assetId": "{" + MISSING + "}"}, id="braces"),
    pytest.param({"assetId": [MISSING]}, id="list"),
    pytest.param({"assetId": {"id": MISSING}}, id="object"),
    pytest.param({"asset": MISSING}, id="wrong-name"),
]


@pytest.mark.parametrize("data", BAD_ASSET_IDS)
def test_bad_asset_id_is_validation_error_naming_it(api, owner, download, data):
    response = api.post(links_url(download.id), data, token=owner.token)
    body_ = assert_error(response, 400, "validation_error")
    assert list(body_["details"]) == ["assetId"]
    assert not DownloadAsset.all_orgs.exists()


def test_empty_body_is_validation_error_naming_asset_id(api, owner, download):
    response = api.post(links_url(download.id), raw=b"", token=owner.token)
    assert list(assert_error(response, 400, "validation_error")["details"]) == ["assetId"]


def test_asset_id_in_upper_case_is_accepted(api, owner, download, asset):
    response = api.post(
        links_url(download.id), {"assetId": str(asset.id).upper()}, token=owner.token
    )
    assert response.status_code == 201
    assert response.json()[0]["assetId"] == str(asset.id)


@pytest.mark.parametrize("name", ["", "   ", 42, ["x"], "x" * 201])
def test_bad_display_name_is_validation_error_naming_it(api, owner, download, asset, name):
    response = api.post(
        links_url(download.id), {"assetId": str(asset.id), "displayName": name}, token=owner.token
    )
    assert list(assert_error(response, 400, "validation_error")["details"]) == ["displayName"]


def test_body_is_validated_before_the_download_is_looked_up(api, owner):
    response = api.post(links_url(MISSING), {"assetId": "nope"}, token=owner.token)
    assert_error(response, 400, "validation_error")


def test_unknown_and_foreign_download_look_the_same(api, owner, asset, foreign_download):
    assert_foreign_looks_missing(
        api,
        "POST",
        links_url(foreign_download.id),
        links_url(MISSING),
        token=owner.token,
        data=body(asset),
    )
    assert not DownloadAsset.all_orgs.exists()


def test_unknown_and_foreign_asset_look_the_same(api, owner, download, foreign_asset):
    # The asset id travels in the body, so this is the isolation helper's check with two
    # bodies instead of two URLs.
    missing = api.post(links_url(download.id), {"assetId": MISSING}, token=owner.token)
    foreign = api.post(links_url(download.id), body(foreign_asset), token=owner.token)
    assert (
        assert_error(missing, 404, "not_found")["message"]
        == (assert_error(foreign, 404, "not_found")["message"])
    )
    assert not DownloadAsset.all_orgs.exists()


def test_foreign_token_cannot_link_into_our_download(api, other_owner, download, asset):
    response = api.post(links_url(download.id), body(asset), token=other_owner.token)
    assert_error(response, 404, "not_found")


@pytest.mark.parametrize(
    "download_id",
    ["nope", "123", MISSING[:-1], MISSING + "0", MISSING.upper(), MISSING.replace("-", "")],
)
def test_malformed_download_id_in_path_is_404(api, owner, asset, download_id):
    response = api.post(links_url(download_id), body(asset), token=owner.token)
    assert_error(response, 404, "not_found")


def test_trailing_slash_is_an_unknown_route(api, owner, download, asset):
    response = api.post(links_url(download.id) + "/", body(asset), token=owner.token)
    assert_error(response, 404, "not_found")


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_other_methods_are_not_allowed(api, owner, download, method):
    """GET reads the links (8.4); the path takes no other method than GET and POST."""
    response = api.request(method, links_url(download.id), {}, token=owner.token)
    assert_error(response, 405, "method_not_allowed")


def test_the_asset_is_not_changed_by_linking(api, owner, download, asset):
    before = Asset.all_orgs.values().get(id=asset.id)
    api.post(links_url(download.id), body(asset), token=owner.token)
    assert Asset.all_orgs.values().get(id=asset.id) == before


@pytest.mark.parametrize("existing", [0, 25])
def test_link_query_count_is_constant(
    api, owner, org, download, django_assert_num_queries, existing
):
    link(download, *AssetFactory.create_batch(existing, org=org))
    asset = AssetFactory(org=org)
    with django_assert_num_queries(LINK_QUERIES):
        response = api.post(links_url(download.id), body(asset), token=owner.token)
    assert response.status_code == 201
    assert len(response.json()) == existing + 1


@pytest.mark.parametrize("existing", [1, 25])
def test_relink_query_count_is_constant(
    api, owner, org, download, django_assert_num_queries, existing
):
    linked = link_new(download, existing)
    with django_assert_num_queries(RELINK_QUERIES):
        response = api.post(links_url(download.id), body(linked[0]), token=owner.token)
    assert response.status_code == 200
    assert len(response.json()) == existing


def test_ids_are_lower_case_uuids(api, owner, download, asset):
    item = api.post(links_url(download.id), body(asset), token=owner.token).json()[0]
    for key in ("orgId", "id", "downloadId", "assetId"):
        assert str(uuid.UUID(item[key])) == item[key]


def test_answers_are_what_the_link_serializer_answers(api, owner, download, assets):
    """The link and unlink answers are built from column values (``LINK.bodies_of``); they must
    read as the serializer's would, microseconds included, before and after renumbering."""
    link(download, *assets[:3])
    DownloadAsset.all_orgs.filter(download=download, seq=2).update(display_name="Ünïcødé")

    def expected():
        stored = DownloadAsset.all_orgs.filter(download=download).order_by("seq")
        return [dict(DownloadAssetSerializer(x).data) for x in stored]

    linked = api.post(links_url(download.id), body(assets[3]), token=owner.token)
    assert linked.json() == expected()
    relinked = api.post(links_url(download.id), body(assets[1]), token=owner.token)
    assert relinked.json() == expected()
    unlinked = api.delete(f"{links_url(download.id)}/{assets[0].id}", token=owner.token)
    assert unlinked.json() == expected()


BLANK = "This field may not be blank."
NOT_TEXT = "Not a valid string."
TOO_LONG = "Ensure this field has no more than 200 characters."
NUL = "Null characters are not allowed."
SURROGATE = "Surrogate characters are not allowed: U+D800."


@pytest.mark.parametrize(
    ("data", "details"),
    [
        pytest.param({"displayName": ""}, {"displayName": [BLANK]}, id="empty"),
        pytest.param({"displayName": "\u3000 "}, {"displayName": [BLANK]}, id="blank"),
        pytest.param({"displayName": 42}, {"displayName": [NOT_TEXT]}, id="number"),
        pytest.param({"displayName": 1.5}, {"displayName": [NOT_TEXT]}, id="float"),
        pytest.param({"displayName": True}, {"displayName": [NOT_TEXT]}, id="boolean"),
        pytest.param({"displayName": ["x"]}, {"displayName": [NOT_TEXT]}, id="list"),
        pytest.param({"displayName": {}}, {"displayName": [NOT_TEXT]}, id="object"),
        pytest.param({"displayName": "x" * 201}, {"displayName": [TOO_LONG]}, id="too-long"),
        pytest.param({"displayName": "a\x00b"}, {"displayName": [NUL]}, id="nul"),
        pytest.param({"displayName": "a\ud800b"}, {"displayName": [SURROGATE]}, id="surrogate"),
        pytest.param(
            {"displayName": "x" * 201 + "\x00\ud800"},
            {"displayName": [TOO_LONG, NUL, SURROGATE]},
            id="every-problem",
        ),
        pytest.param(
            {"assetId": "nope", "displayName": " "},
            {"assetId": ["Must be a valid UUID."], "displayName": [BLANK]},
            id="with-a-bad-asset-id",
        ),
        pytest.param(
            {"assetId": 5, "displayName": 42},
            {"assetId": ["Must be a valid UUID."], "displayName": [NOT_TEXT]},
            id="with-a-number-for-asset-id",
        ),
    ],
)
def test_a_bad_display_name_is_answered_word_for_word(
    api, owner, download, asset, data, details, django_assert_num_queries
):
    """Every problem of the display name, in this order, and beside the asset id's; the
    token is all a refused body reads (no transaction is opened for it)."""
    with django_assert_num_queries(1):
        response = api.post(
            links_url(download.id), {"assetId": str(asset.id), **data}, token=owner.token
        )
    answer = assert_error(response, 400, "validation_error")
    field, messages = next(iter(details.items()))
    assert (answer["message"], answer["details"]) == (f"Invalid {field}: {messages[0]}", details)
    assert list(answer["details"]) == list(details)
    assert not DownloadAsset.all_orgs.exists()


def test_a_bad_display_name_of_an_unknown_download_is_a_400_not_a_404(api, owner, asset):
    response = api.post(
        links_url(MISSING), {"assetId": str(asset.id), "displayName": ""}, token=owner.token
    )
    assert assert_error(response, 400, "validation_error")["details"] == {"displayName": [BLANK]}


def test_a_long_name_that_trims_to_the_limit_is_taken(api, owner, download, asset):
    response = api.post(
        links_url(download.id),
        {"assetId": str(asset.id), "displayName": f"  {'x' * 200}\t"},
        token=owner.token,
    )
    assert response.status_code == 201
    assert response.json()[0]["displayName"] == "x" * 200
