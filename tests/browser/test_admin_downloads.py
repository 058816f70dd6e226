"""Staff fill the media library and arrange a download's assets in a real browser; the API
answers the same links in the same order.

The API has no listing of a download's links: re-linking an asset that is already linked
(``POST /api/downloads/{id}/assets``) changes nothing and answers 200 with the whole list,
so that is how these tests read what the admin saved.
"""

from __future__ import annotations

from downloads.models import Asset, DownloadAsset
from organizations.models import Membership
from tests.downloads.factories import AssetFactory, DownloadFactory, link
from tests.factories import OrganizationFactory
from tests.helpers import make_member


def links_seen_by_api(live_api, download, asset, token) -> list[tuple[str, int, str]]:
    """(assetId, seq, displayName) of every link, in order, as a client reads them."""
    response = live_api.post(
        f"/api/downloads/{download.id}/assets", {"assetId": str(asset.id)}, token=token
    )
    assert response.status == 200, response.body  # already linked: nothing created
    return [(link["assetId"], link["seq"], link["displayName"]) for link in response.json()]


def shown_links(ui) -> list[tuple[str, str, str]]:
    """(asset, position, display name) of each saved link row of the download's page."""
    rows = []
    for index in range(int(ui.page.locator("#id_links-INITIAL_FORMS").input_value())):
        asset = ui.field(f"links-{index}-asset").locator("option:checked").inner_text()
        seq = ui.field(f"links-{index}-seq").input_value()
        rows.append((asset.strip(), seq, ui.field(f"links-{index}-display_name").input_value()))
    return rows


def test_owner_fills_the_media_library_and_links_assets_in_order(admin_as, make_staff, live_api):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)
    instructor = make_member(org, Membership.Role.INSTRUCTOR)
    download = DownloadFactory(org=org, name="Spring pack")
    AssetFactory(org=OrganizationFactory(name="Other Org"), name="Handbook of another org")

    ui = admin_as(staff.user)
    # The media library: two assets, by URL, the second from "Save and add another".
    ui.open_add("downloads", "asset")
    for name, button in [("Handbook", "_addanother"), ("Slides", "_save")]:
        url = f"https://cdn.example.com/{name.lower()}.pdf"
        ui.fill({"org": "Acme Learning", "name": name, "url": url})
        ui.save_added(button)
    handbook, slides = Asset.all_orgs.filter(org=org).order_by("name")
    assert (handbook.name, slides.name) == ("Handbook", "Slides")

    # Both linked through the inline, in the order typed; the second under its own name.
    ui.open_change(download)
    # The asset picker searches this organization's library only.
    assert ui.autocomplete_results("links-0-asset", "Handbook") == ["Handbook"]
    ui.choose_autocomplete("links-0-asset", "Handbook")
    ui.fill_inline("links", 0, {"seq": 1})
    row = ui.add_inline_row("links")
    ui.choose_autocomplete(f"links-{row}-asset", "Slides")
    ui.fill_inline("links", row, {"seq": 2, "display_name": "Slides (PDF)"})
    ui.save("_continue")
    assert any("was changed successfully" in message for message in ui.messages()), ui.errors()
    assert shown_links(ui) == [("Handbook", "1", "Handbook"), ("Slides", "2", "Slides (PDF)")]

    token = instructor.token
    assert links_seen_by_api(live_api, download, handbook, token) == [
        (str(handbook.id), 1, "Handbook"),
        (str(slides.id), 2, "Slides (PDF)"),
    ]


def test_owner_swaps_two_links_then_removes_one_and_the_asset_stays(admin_as, make_staff, live_api):
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)
    token = make_member(org, Membership.Role.INSTRUCTOR).token
    download = DownloadFactory(org=org, name="Spring pack")
    handbook = AssetFactory(org=org, name="Handbook")
    slides = AssetFactory(org=org, name="Slides")
    link(download, handbook, slides)

    ui = admin_as(staff.user)
    ui.open_change(download)
    assert shown_links(ui) == [("Handbook", "1", "Handbook"), ("Slides", "2", "Slides")]
    # Swapping the two positions, and renaming one, in one save.
    ui.fill_inline("links", 0, {"seq": 2})
    ui.fill_inline("links", 1, {"seq": 1, "display_name": "Slides (PDF)"})
    ui.save("_continue")
    assert any("was changed successfully" in message for message in ui.messages()), ui.errors()
    assert links_seen_by_api(live_api, download, handbook, token) == [
        (str(slides.id), 1, "Slides (PDF)"),
        (str(handbook.id), 2, "Handbook"),
    ]
    assert shown_links(ui) == [("Slides", "1", "Slides (PDF)"), ("Handbook", "2", "Handbook")]

    # Removing the first link renumbers the rest; the asset stays in the media library.
    ui.fill_inline("links", 0, {"DELETE": True})
    ui.save("_continue")
    assert any("was changed successfully" in message for message in ui.messages()), ui.errors()
    assert links_seen_by_api(live_api, download, handbook, token) == [
        (str(handbook.id), 1, "Handbook"),
    ]
    assert shown_links(ui) == [("Handbook", "1", "Handbook")]
    assert not DownloadAsset.all_orgs.filter(asset=slides).exists()

    ui.open_changelist("downloads", "asset", "in_use=no")
    rows = ui.changelist_rows()
    assert len(rows) == 1 and rows[0].startswith("Slides Acme Learning"), rows
    ui.open_change(slides)
    assert ui.readonly_value("used_by") == "no download"
    assert ui.field("name").input_value() == "Slides"
