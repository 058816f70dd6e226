"""The database itself refuses what the services never write: a second link of one asset,
two links at one position, position 0, and an asset that is both or neither file and URL."""

import pytest
from django.db import IntegrityError, transaction
from django.db.models import RestrictedError

from downloads.models import Asset, Download, DownloadAsset
from organizations.models import Organization
from tests.downloads.factories import AssetFactory, link

pytestmark = pytest.mark.django_db


def raw_link(download, asset, seq):
    return DownloadAsset.all_orgs.create(
        org=download.org, download=download, asset=asset, seq=seq, display_name=asset.name
    )


def test_database_refuses_a_second_link_of_one_asset(download, asset):
    raw_link(download, asset, 1)
    with pytest.raises(IntegrityError), transaction.atomic():
        raw_link(download, asset, 2)


def test_database_refuses_two_links_at_one_position(download, assets):
    raw_link(download, assets[0], 1)
    with pytest.raises(IntegrityError), transaction.atomic():
        raw_link(download, assets[1], 1)


def test_database_refuses_position_zero(download, asset):
    with pytest.raises(IntegrityError), transaction.atomic():
        raw_link(download, asset, 0)


@pytest.mark.parametrize(
    "values",
    [{"url": "", "file": ""}, {"url": "https://cdn.example.com/x.pdf", "file": "assets/x.pdf"}],
    ids=["neither", "both"],
)
def test_database_refuses_an_asset_that_is_not_exactly_a_file_or_a_url(org, values):
    with pytest.raises(IntegrityError), transaction.atomic():
        Asset.all_orgs.create(org=org, name="x", **values)


def test_an_uploaded_file_asset_is_fine(org):
    assert Asset.all_orgs.create(org=org, name="x", file="assets/x.pdf").file.name == "assets/x.pdf"


def test_a_linked_asset_cannot_be_deleted(download, asset):
    link(download, asset)
    with pytest.raises(RestrictedError):
        asset.delete()


def test_deleting_a_download_deletes_its_links_not_its_assets(download, assets):
    link(download, *assets)
    download.delete()
    assert not DownloadAsset.all_orgs.exists()
    assert Asset.all_orgs.count() == len(assets)


def test_deleting_an_organization_deletes_its_library(org, download, assets):
    link(download, *assets)
    AssetFactory()  # another organization's
    Organization.objects.filter(id=org.id).delete()
    assert not DownloadAsset.all_orgs.exists() and not Download.all_orgs.exists()
    assert Asset.all_orgs.count() == 1
