import pytest

from tests.downloads.factories import AssetFactory, DownloadFactory
from tests.helpers import org_fixture

download = org_fixture(DownloadFactory, name="Python starter pack")
asset = org_fixture(AssetFactory, name="Cheat sheet.pdf")
foreign_download = org_fixture(DownloadFactory, "other_org", name="Their pack")
foreign_asset = org_fixture(AssetFactory, "other_org", name="Their file")


@pytest.fixture
def assets(org):
    return AssetFactory.create_batch(5, org=org)
