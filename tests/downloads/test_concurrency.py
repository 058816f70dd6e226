"""Simultaneous calls on one download, with real threads and connections on PostgreSQL:
the download's row lock serializes them and the unique constraints back it up."""

import threading
from collections import Counter

import pytest
from django.db import connection

from downloads.models import DownloadAsset
from tests.downloads.factories import AssetFactory, link_new
from tests.helpers import ApiClient

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def run_together(calls) -> list:
    """Runs each call in its own thread (and database connection), released at once by a
    barrier; returns each call's response, or the exception it raised."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def worker(index, call):
        try:
            barrier.wait(timeout=30)
            results[index] = call(ApiClient())
        except Exception as exc:  # reported by the test, not lost in the thread
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=pair) for pair in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    return results


def post_link(token, download, asset):
    url = f"/api/downloads/{download.id}/assets"
    return lambda client: client.post(url, {"assetId": str(asset.id)}, token=token)


def delete_link(token, download, asset):
    url = f"/api/downloads/{download.id}/assets/{asset.id}"
    return lambda client: client.delete(url, token=token)


def test_sixteen_simultaneous_links_of_one_asset_make_one_link(instructor, download, asset):
    responses = run_together([post_link(instructor.token, download, asset)] * 16)

    assert Counter(r.status_code for r in responses) == {201: 1, 200: 15}, responses
    assert DownloadAsset.all_orgs.filter(download=download).count() == 1
    for response in responses:
        assert [(x["assetId"], x["seq"]) for x in response.json()] == [(str(asset.id), 1)]


def test_eight_simultaneous_links_of_different_assets_get_seq_one_to_eight(
    org, instructor, download
):
    assets = AssetFactory.create_batch(8, org=org)
    responses = run_together([post_link(instructor.token, download, a) for a in assets])

    assert [r.status_code for r in responses] == [201] * 8, responses
    stored = DownloadAsset.all_orgs.filter(download=download).order_by("seq")
    assert [x.seq for x in stored] == list(range(1, 9))
    assert {x.asset_id for x in stored} == {a.id for a in assets}
    # Each caller saw the list as its own link left it: 1..k, ending with its asset.
    for asset, response in zip(assets, responses, strict=True):
        items = response.json()
        assert [x["seq"] for x in items] == list(range(1, len(items) + 1))
        assert items[-1]["assetId"] == str(asset.id)
    assert sorted(len(r.json()) for r in responses) == list(range(1, 9))


def test_simultaneous_links_and_unlinks_keep_positions_one_to_n(org, instructor, download):
    linked = link_new(download, 8)
    fresh = AssetFactory.create_batch(4, org=org)
    calls = [delete_link(instructor.token, download, a) for a in linked[::2]]
    calls += [post_link(instructor.token, download, a) for a in fresh]

    responses = run_together(calls)

    assert [r.status_code for r in responses] == [200] * 4 + [201] * 4, responses
    stored = list(DownloadAsset.all_orgs.filter(download=download).order_by("seq"))
    assert [x.seq for x in stored] == list(range(1, 9))
    # The survivors keep their relative order, ahead of everything linked since.
    assert [x.asset_id for x in stored[:4]] == [a.id for a in linked[1::2]]
    assert {x.asset_id for x in stored[4:]} == {a.id for a in fresh}
