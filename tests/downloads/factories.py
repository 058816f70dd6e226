"""Factories of the media library and downloads. Links are made through the service
(``link``), never by a factory, so tests start from states the service can produce."""

import factory

from downloads import services
from downloads.models import Asset, Download, DownloadAsset
from tests.factories import OrgScopedFactory


class AssetFactory(OrgScopedFactory):
    class Meta:
        model = Asset

    name = factory.Sequence(lambda n: f"Asset {n}")
    url = factory.Sequence(lambda n: f"https://cdn.example.com/assets/{n}.pdf")
    content_type = "application/pdf"
    size = 1024


class DownloadFactory(OrgScopedFactory):
    class Meta:
        model = Download

    name = factory.Sequence(lambda n: f"Download {n}")
    description = "A pack of files."
    published = True


def link(download: Download, *assets: Asset) -> list[DownloadAsset]:
    """Links ``assets`` in order through the service; returns the download's links."""
    links: list[DownloadAsset] = []
    for asset in assets:
        links, _ = services.link_asset(org=download.org, download_id=download.id, asset_id=asset.id)
    return links


def link_new(download: Download, count: int) -> list[Asset]:
    """``count`` new assets of the download's organization, linked in order."""
    assets = AssetFactory.create_batch(count, org=download.org)
    link(download, *assets)
    return assets
