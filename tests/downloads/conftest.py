import pytest

from tests.downloads.factories import AssetFactory, DownloadFactory


@pytest.fixture
def download(org):
    return DownloadFactory(org=org, name="Python starter pack")


@pytest.fixture
def asset(org):
    return AssetFactory(org=org, name="Cheat sheet.pdf")


@pytest.fixture
def assets(org):
    return AssetFactory.create_batch(5, org=org)


@pytest.fixture
def foreign_download(other_org):
    return DownloadFactory(org=other_org, name="Their pack")


@pytest.fixture
def foreign_asset(other_org):
    return AssetFactory(org=other_org, name="Their file")
