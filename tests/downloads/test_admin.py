"""The admin: the media library with usage counts, and a download's links inline, saved
through the same services as the API (order 1..n, removing a link keeps the asset)."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from downloads import services
from downloads.models import Asset, DownloadAsset
from organizations.models import Membership, User
from tests.downloads.factories import AssetFactory, DownloadFactory, link
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

ASSETS_URL = "/admin/downloads/asset/"


def change_url(download) -> str:
    return f"/admin/downloads/download/{download.id}/change/"


@pytest.fixture
def admin_client() -> Client:
    client = Client()
    # No password: hashing one is the slowest part of a test.
    client.force_login(User.objects.create_superuser(email="root@example.com", password=None))
    return client


def inline_post(download, rows: list[dict], **download_fields) -> dict:
    """The change form's POST: the download's fields and one inline row per dict (rows with
    an ``id`` are existing links)."""
    initial = sum(1 for row in rows if row.get("id"))
    data = {
        "name": download.name,
        "description": download.description,
        "links-TOTAL_FORMS": str(len(rows)),
        "links-INITIAL_FORMS": str(initial),
        "links-MIN_NUM_FORMS": "0",
        "links-MAX_NUM_FORMS": "1000",
        "_save": "Save",
        **download_fields,
    }
    if download.published:
        data["published"] = "on"
    for index, row in enumerate(rows):
        prefix = f"links-{index}-"
        data[prefix + "download"] = "" if download._state.adding else str(download.id)
        data[prefix + "id"] = str(row.get("id", ""))
        data[prefix + "asset"] = str(row.get("asset", ""))
        data[prefix + "seq"] = str(row.get("seq", ""))
        data[prefix + "display_name"] = row.get("display_name", "")
        if row.get("delete"):
            data[prefix + "DELETE"] = "on"
    return data


def rows_of(links) -> list[dict]:
    return [
        {"id": x.id, "asset": x.asset_id, "seq": x.seq, "display_name": x.display_name}
        for x in links
    ]


def stored(download) -> list[tuple]:
    return list(
        DownloadAsset.all_orgs.filter(download=download)
        .order_by("seq")
        .values_list("asset_id", "seq", "display_name")
    )


def test_asset_list_shows_how_many_downloads_use_each_asset(admin_client, org, assets):
    for _ in range(2):
        link(DownloadFactory(org=org), assets[0])
    link(DownloadFactory(org=org), assets[1])

    response = admin_client.get(ASSETS_URL)

    counts = {a.id: a.download_count for a in response.context["cl"].result_list}
    assert counts == {assets[0].id: 2, assets[1].id: 1, **{a.id: 0 for a in assets[2:]}}


@pytest.mark.parametrize("extra", [0, 20])
def test_asset_list_query_count_does_not_grow_with_assets(
    admin_client, org, assets, django_assert_num_queries, extra
):
    download = DownloadFactory(org=org)
    link(download, *assets, *AssetFactory.create_batch(extra, org=org))
    # Session, user, count, rows with their counts, the filters' choices (organizations,
    # content types).
    with django_assert_num_queries(7):
        response = admin_client.get(ASSETS_URL)
    assert response.status_code == 200
    assert len(response.context["cl"].result_list) == len(assets) + extra


def test_asset_search_and_in_use_filter(admin_client, org, assets):
    link(DownloadFactory(org=org), assets[0])
    found = admin_client.get(ASSETS_URL, {"q": assets[1].name})
    assert [a.id for a in found.context["cl"].result_list] == [assets[1].id]
    used = admin_client.get(ASSETS_URL, {"in_use": "yes"})
    assert [a.id for a in used.context["cl"].result_list] == [assets[0].id]
    unused = admin_client.get(ASSETS_URL, {"in_use": "no"})
    assert {a.id for a in unused.context["cl"].result_list} == {a.id for a in assets[1:]}


def test_staff_owner_sees_only_their_organizations_assets(org, other_org, assets, foreign_asset):
    user = UserFactory(is_staff=True)
    MembershipFactory(org=org, user=user, role=Membership.Role.OWNER)
    client = Client()
    client.force_login(user)
    listed = {a.id for a in client.get(ASSETS_URL).context["cl"].result_list}
    assert listed == {a.id for a in assets}


def test_download_page_lists_links_in_seq_order(admin_client, org, download, assets):
    link(download, *assets[:3])
    order = [assets[2].id, assets[0].id, assets[1].id]
    services.arrange_links(org=org, download_id=download.id, order=order)
    response = admin_client.get(change_url(download))
    formset = response.context["inline_admin_formsets"][0].formset
    shown = [f.instance for f in formset.forms if not f.instance._state.adding]
    assert [(x.asset_id, x.seq) for x in shown] == [(a, n) for n, a in enumerate(order, 1)]


def test_inline_reorders_renames_removes_and_adds_keeping_one_to_n(
    admin_client, org, download, assets
):
    links = link(download, *assets[:4])
    rows = rows_of(links)
    rows[3]["seq"] = 1  # move the fourth to the front
    rows[0]["display_name"] = "Renamed"
    rows[1]["delete"] = True
    rows.append({"asset": assets[4].id})  # a new row without a position goes last

    response = admin_client.post(change_url(download), inline_post(download, rows))

    assert response.status_code == 302, response.context and response.context["errors"]
    assert stored(download) == [
        (assets[3].id, 1, assets[3].name),
        (assets[0].id, 2, "Renamed"),
        (assets[2].id, 3, assets[2].name),
        (assets[4].id, 4, assets[4].name),
    ]


def test_removing_a_link_in_the_admin_never_deletes_the_asset(admin_client, download, asset):
    rows = rows_of(link(download, asset))
    rows[0]["delete"] = True
    response = admin_client.post(change_url(download), inline_post(download, rows))
    assert response.status_code == 302
    assert stored(download) == []
    assert Asset.all_orgs.filter(id=asset.id).exists()


def test_moving_a_link_down_puts_it_at_that_position(admin_client, download, assets):
    rows = rows_of(link(download, *assets[:3]))
    rows[0]["seq"] = 3
    admin_client.post(change_url(download), inline_post(download, rows))
    assert [a for a, *_ in stored(download)] == [assets[1].id, assets[2].id, assets[0].id]


def test_positions_typed_with_gaps_and_ties_come_out_one_to_n(admin_client, download, assets):
    rows = rows_of(link(download, *assets[:3]))
    rows[0]["seq"], rows[1]["seq"], rows[2]["seq"] = 50, 7, 7
    rows.append({"asset": assets[3].id, "seq": 7, "display_name": "New"})
    response = admin_client.post(change_url(download), inline_post(download, rows))
    assert response.status_code == 302
    assert stored(download) == [
        (assets[3].id, 1, "New"),
        (assets[1].id, 2, assets[1].name),
        (assets[2].id, 3, assets[2].name),
        (assets[0].id, 4, assets[0].name),
    ]


def test_a_blank_name_falls_back_to_the_assets_name(admin_client, download, asset):
    rows = rows_of(link(download, asset))
    admin_client.post(
        change_url(download), inline_post(download, [{**rows[0], "display_name": "X"}])
    )
    rows[0]["display_name"] = ""
    admin_client.post(change_url(download), inline_post(download, rows))
    assert stored(download) == [(asset.id, 1, asset.name)]


@pytest.mark.parametrize("new", [False, True], ids=["renamed", "added"])
def test_a_name_is_stored_trimmed(admin_client, download, assets, new):
    rows = rows_of(link(download, assets[0]))
    name = f" \t{'x' * 200}  "  # at the limit once trimmed
    if new:
        rows.append({"asset": assets[1].id, "display_name": name})
    else:
        rows[0]["display_name"] = name
    response = admin_client.post(change_url(download), inline_post(download, rows))
    assert response.status_code == 302, response.context and response.context["errors"]
    assert [x[2] for x in stored(download)] == ([assets[0].name, "x" * 200] if new else ["x" * 200])


@pytest.mark.parametrize("name", ["x" * 201, "a\x00b"])
@pytest.mark.parametrize("new", [False, True], ids=["renamed", "added"])
def test_a_name_that_is_no_display_name_is_an_error_on_its_row(
    admin_client, download, assets, name, new
):
    rows = rows_of(link(download, assets[0]))
    if new:
        rows.append({"asset": assets[1].id, "display_name": name})
    else:
        rows[0]["display_name"] = name
    response = admin_client.post(change_url(download), inline_post(download, rows))
    assert response.status_code == 200
    (formset,) = [inline.formset for inline in response.context["inline_admin_formsets"]]
    assert [sorted(errors) for errors in formset.errors] == (
        [[], ["display_name"]] if new else [["display_name"]]
    )
    assert stored(download) == [(assets[0].id, 1, assets[0].name)]


def test_the_same_asset_twice_is_a_form_error(admin_client, download, assets):
    rows = rows_of(link(download, assets[0]))
    rows.append({"asset": assets[0].id})
    response = admin_client.post(change_url(download), inline_post(download, rows))
    assert response.status_code == 200
    assert "already linked" in str(response.context["errors"])
    assert stored(download) == [(assets[0].id, 1, assets[0].name)]


def test_another_organizations_asset_is_a_form_error(admin_client, download, foreign_asset):
    response = admin_client.post(
        change_url(download), inline_post(download, [{"asset": foreign_asset.id}])
    )
    assert response.status_code == 200
    assert "organization" in str(response.context["errors"])
    assert stored(download) == []


def test_position_zero_is_a_form_error(admin_client, download, asset):
    rows = rows_of(link(download, asset))
    rows[0]["seq"] = 0
    response = admin_client.post(change_url(download), inline_post(download, rows))
    assert response.status_code == 200
    assert stored(download) == [(asset.id, 1, asset.name)]


def test_the_asset_of_an_existing_link_cannot_be_swapped(admin_client, download, assets):
    rows = rows_of(link(download, assets[0]))
    rows[0]["asset"] = assets[1].id
    admin_client.post(change_url(download), inline_post(download, rows))
    assert stored(download) == [(assets[0].id, 1, assets[0].name)]


def test_a_new_download_with_links_in_one_save(admin_client, org, assets):
    data = inline_post(
        DownloadFactory.build(org=org, name="Fresh pack"),
        [{"asset": assets[1].id}, {"asset": assets[0].id, "seq": 1}],
        org=str(org.id),
    )
    response = admin_client.post("/admin/downloads/download/add/", data)
    assert response.status_code == 302, response.context and response.context["errors"]
    created = DownloadAsset.all_orgs.get(asset=assets[1]).download
    assert created.name == "Fresh pack"
    assert [a for a, *_ in stored(created)] == [assets[0].id, assets[1].id]


def test_deleting_a_linked_asset_in_the_admin_is_refused(admin_client, download, asset):
    link(download, asset)
    response = admin_client.post(f"{ASSETS_URL}{asset.id}/delete/", {"post": "yes"})
    assert response.status_code == 200  # the "cannot delete" page
    assert Asset.all_orgs.filter(id=asset.id).exists()


@pytest.mark.parametrize(
    "url", [ASSETS_URL + "add/", "/admin/downloads/download/add/", "/admin/downloads/download/"]
)
def test_admin_pages_render(admin_client, download, url):
    assert admin_client.get(url).status_code == 200


def test_asset_page_names_the_downloads_using_it(admin_client, download, asset):
    link(download, asset)
    response = admin_client.get(f"{ASSETS_URL}{asset.id}/change/")
    assert download.name in response.content.decode()


def test_uploading_a_file_records_its_size_and_type(admin_client, org, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    upload = SimpleUploadedFile("notes.txt", b"hello world", content_type="text/plain")
    response = admin_client.post(
        ASSETS_URL + "add/",
        {"org": str(org.id), "name": "Notes", "file": upload, "url": "", "content_type": ""},
    )
    assert response.status_code == 302, response.context and response.context["errors"]
    asset = Asset.all_orgs.get(name="Notes")
    assert (asset.size, asset.content_type, asset.url) == (11, "text/plain", "")


def test_an_asset_with_both_a_file_and_a_url_is_a_form_error(admin_client, org, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    upload = SimpleUploadedFile("notes.txt", b"hello", content_type="text/plain")
    response = admin_client.post(
        ASSETS_URL + "add/",
        {"org": str(org.id), "name": "Notes", "file": upload, "url": "https://x.example/a"},
    )
    assert response.status_code == 200
    assert "exactly one" in str(response.context["errors"])
    assert not Asset.all_orgs.exists()


def test_a_link_added_by_the_api_since_the_page_was_shown_is_kept_last(
    admin_client, org, download, assets
):
    rows = rows_of(link(download, *assets[:3]))  # the page as the admin saw it
    link(download, assets[3])
    rows[2]["seq"] = 1

    response = admin_client.post(change_url(download), inline_post(download, rows))

    assert response.status_code == 302, response.context["errors"]
    assert [a for a, *_ in stored(download)] == [
        assets[2].id,
        assets[0].id,
        assets[1].id,
        assets[3].id,
    ]


def test_a_link_removed_by_the_api_since_the_page_was_shown_is_a_form_error(
    admin_client, org, download, assets
):
    rows = rows_of(link(download, *assets[:3]))
    services.unlink_asset(org=org, download_id=download.id, asset_id=assets[1].id)
    rows[2]["seq"] = 1

    response = admin_client.post(change_url(download), inline_post(download, rows))

    assert response.status_code == 200
    assert [a for a, *_ in stored(download)] == [assets[0].id, assets[2].id]
