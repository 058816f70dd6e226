"""seed_demo's downloads and assets: the manifest docs/demo.md describes, usable through the API
with the demo tokens, and the same state after every run."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from downloads.models import Asset, Download, DownloadAsset
from tests.helpers import ApiClient

pytestmark = pytest.mark.django_db


def seed() -> dict:
    out = StringIO()
    call_command("seed_demo", "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


def links_of(download_id) -> list[tuple]:
    return list(
        DownloadAsset.all_orgs.filter(download_id=download_id)
        .order_by("seq")
        .values_list("asset_id", "seq")
    )


def test_manifest_has_downloads_and_assets_as_promised():
    manifest = seed()
    for key in ("org", "otherOrg"):
        part = manifest[key]
        first, second = part["downloads"]
        assert len(part["assets"]) >= 5
        linked = links_of(first)
        assert len(linked) >= 2
        assert [seq for _, seq in linked] == list(range(1, len(linked) + 1))
        assert links_of(second) == []
        org_id = part["id"]
        assert Download.all_orgs.filter(id__in=part["downloads"], org_id=org_id).count() == 2
        assert Asset.all_orgs.filter(id__in=part["assets"], org_id=org_id).count() == len(
            part["assets"]
        )


def test_demo_tokens_can_link_and_unlink_an_asset():
    demo = seed()["org"]
    api = ApiClient()
    second, asset = demo["downloads"][1], demo["assets"][0]
    url = f"/api/downloads/{second}/assets"
    linked = api.post(url, {"assetId": asset}, token=demo["tokens"]["instructor"])
    assert (linked.status_code, linked.json()[0]["seq"]) == (201, 1)
    refused = api.post(url, {"assetId": asset}, token=demo["tokens"]["learner"])
    assert refused.status_code == 403
    unlinked = api.delete(f"{url}/{asset}", token=demo["tokens"]["owner"])
    assert (unlinked.status_code, unlinked.json()) == (200, [])


def test_seed_demo_twice_leaves_one_data_set_in_the_same_state():
    first = seed()
    orgs = (first["org"], first["otherOrg"])
    state = {d: links_of(d) for part in orgs for d in part["downloads"]}
    counts = (Asset.all_orgs.count(), Download.all_orgs.count(), DownloadAsset.all_orgs.count())

    # Whatever happened in between (an unlink on the first, a link on the second) is undone.
    org = first["org"]
    api, token = ApiClient(), org["tokens"]["owner"]
    api.delete(f"/api/downloads/{org['downloads'][0]}/assets/{org['assets'][0]}", token=token)
    api.post(
        f"/api/downloads/{org['downloads'][1]}/assets", {"assetId": org["assets"][0]}, token=token
    )

    second = seed()
    for key in ("org", "otherOrg"):
        assert second[key]["downloads"] == first[key]["downloads"]
        assert second[key]["assets"] == first[key]["assets"]
    assert {d: links_of(d) for d in state} == state
    assert (
        Asset.all_orgs.count(),
        Download.all_orgs.count(),
        DownloadAsset.all_orgs.count(),
    ) == counts
