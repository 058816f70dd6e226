"""The services behind the API and the admin: reordering keeps 1..n, and a writer that
slipped past the download lock makes the database refuse, which is retried, not a 500."""

import pytest
from django.core.exceptions import ValidationError

from downloads import services
from downloads.models import DownloadAsset
from lms.errors import NotFound, wire_details
from tests.downloads.factories import link, link_new
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db


def stored(download) -> list[tuple]:
    return list(
        DownloadAsset.all_orgs.filter(download=download)
        .order_by("seq")
        .values_list("asset_id", "seq", "display_name")
    )


def test_arrange_reverses_every_position_without_a_collision(org, download):
    assets = link_new(download, 12)
    reverse = [a.id for a in reversed(assets)]

    links = services.arrange_links(org=org, download_id=download.id, order=reverse)

    assert [(x.asset_id, x.seq) for x in links] == [(a, n) for n, a in enumerate(reverse, 1)]
    assert [(a, s) for a, s, _ in stored(download)] == [(a, n) for n, a in enumerate(reverse, 1)]


def test_arrange_renames(org, download, assets):
    link(download, *assets[:2])
    services.arrange_links(
        org=org,
        download_id=download.id,
        order=[assets[0].id, assets[1].id],
        display_names={assets[1].id: "Workbook"},
    )
    assert stored(download)[1] == (assets[1].id, 2, "Workbook")


@pytest.mark.parametrize(
    "order",
    [
        pytest.param(lambda a: [a[0].id], id="one-missing"),
        pytest.param(lambda a: [a[0].id, a[1].id, a[1].id], id="duplicate"),
        pytest.param(lambda a: [a[0].id, a[1].id, a[2].id], id="not-linked"),
        pytest.param(lambda a: [a[0].id, "nope"], id="malformed"),
    ],
)
def test_arrange_refuses_an_order_that_is_not_every_link_once(org, download, assets, order):
    link(download, *assets[:2])
    with pytest.raises(ValidationError) as caught:
        services.arrange_links(org=org, download_id=download.id, order=order(assets))
    assert list(wire_details(caught.value)) == ["order"]
    assert [a for a, *_ in stored(download)] == [assets[0].id, assets[1].id]


def test_arrange_refuses_a_name_for_an_asset_that_is_not_linked(org, download, assets):
    """A display name is judged where it enters (the serializer, the admin's form); which
    assets are linked only the service can tell."""
    a, b = assets[:2]
    link(download, a)
    with pytest.raises(ValidationError) as caught:
        services.arrange_links(
            org=org,
            download_id=download.id,
            order=[a.id],
            display_names={a.id: "Renamed", b.id: "Not linked"},
        )
    assert wire_details(caught.value) == {"displayNames": [f"{b.id} is not linked."]}
    assert stored(download) == [(a.id, 1, a.name)]


def test_arrange_of_a_foreign_download_is_not_found(org, foreign_download):
    with pytest.raises(NotFound):
        services.arrange_links(org=org, download_id=foreign_download.id, order=[])


def test_unlink_renumbers_even_a_download_whose_positions_have_gaps(org, download, assets):
    # Not a state the services produce; the renumbering must not depend on 1..n before it.
    for seq, asset in zip([2, 5, 9, 10], assets, strict=False):
        DownloadAsset.all_orgs.create(
            org=org, download=download, asset=asset, seq=seq, display_name=asset.name
        )
    links = services.unlink_asset(org=org, download_id=download.id, asset_id=assets[1].id)
    assert [(x.asset_id, x.seq) for x in links] == [
        (assets[0].id, 1),
        (assets[2].id, 2),
        (assets[3].id, 3),
    ]


def test_a_link_that_loses_a_race_is_retried_and_answers_200(
    api, owner, org, download, asset, monkeypatch
):
    """Simulates a writer that bypassed the lock: the first attempt reads no links, so its
    insert meets the one already stored and the database refuses it."""
    link(download, asset)
    real = services.current_links
    stale = iter([[]])
    monkeypatch.setattr(services, "current_links", lambda *a: next(stale, None) or real(*a))

    response = api.post(
        f"/api/downloads/{download.id}/assets", {"assetId": str(asset.id)}, token=owner.token
    )

    assert response.status_code == 200
    assert [x["seq"] for x in response.json()] == [1]
    assert DownloadAsset.all_orgs.count() == 1


def test_a_link_that_keeps_losing_is_409_conflict_never_500(
    api, owner, org, download, asset, monkeypatch
):
    link(download, asset)
    monkeypatch.setattr(services, "current_links", lambda *a: [])

    response = api.post(
        f"/api/downloads/{download.id}/assets", {"assetId": str(asset.id)}, token=owner.token
    )

    assert_error(response, 409, "conflict")
    assert DownloadAsset.all_orgs.count() == 1


# --- replace_links: an editor's whole change at once ---------------------------------------


def test_replace_unlinks_links_orders_and_renames_in_one_go(org, download, assets):
    a, b, c, d = assets[:4]
    link(download, a, b, c)
    links, added = services.replace_links(
        org=org,
        download_id=download.id,
        unlink=[b.id],
        link=[services.NewLink(d.id, "Fourth")],
        order=[d.id, c.id, a.id],
        display_names={a.id: "First, renamed"},
    )
    assert [x.asset_id for x in links] == [d.id, c.id, a.id]
    assert [x.asset_id for x in added] == [d.id]
    assert stored(download) == [
        (d.id, 1, "Fourth"),
        (c.id, 2, c.name),
        (a.id, 3, "First, renamed"),
    ]


def test_replace_keeps_what_another_writer_changed_meanwhile(org, download, assets):
    """The editor read [a, b]; since then the API unlinked b and linked c. The editor's order
    skips what is gone, and c comes last."""
    a, b, c = assets[:3]
    link(download, a, b)
    services.unlink_asset(org=org, download_id=download.id, asset_id=b.id)
    services.link_asset(org=org, download_id=download.id, asset_id=c.id)
    links, _ = services.replace_links(
        org=org,
        download_id=download.id,
        unlink=[b.id],  # already gone: nothing to do
        order=[b.id, a.id],
        display_names={b.id: "renamed while gone"},
    )
    assert [(x.asset_id, x.seq) for x in links] == [(a.id, 1), (c.id, 2)]


def test_replace_is_all_or_nothing(org, download, assets, foreign_asset):
    a, b = assets[:2]
    link(download, a)
    with pytest.raises(NotFound):
        services.replace_links(
            org=org,
            download_id=download.id,
            unlink=[a.id],
            # Refused after the unlink and the first link: neither stays.
            link=[services.NewLink(b.id), services.NewLink(foreign_asset.id)],
            order=[b.id],
        )
    assert [x[0] for x in stored(download)] == [a.id]


def test_a_refusal_that_is_no_race_is_a_500_not_retried_into_a_409(
    api, owner, org, download, assets, monkeypatch
):
    """Only the links' unique constraints are a race: a new link whose id is taken breaks
    the primary key, a fault that no retry mends, and it answers as the 500 it is."""
    (taken,) = link(download, assets[0])
    monkeypatch.setattr(services, "uuid7", lambda: taken.id)

    response = api.post(
        f"/api/downloads/{download.id}/assets", {"assetId": str(assets[1].id)}, token=owner.token
    )

    assert_error(response, 500, "internal_error")
    assert DownloadAsset.all_orgs.count() == 1
