"""What other apps may use of downloads: the media library's assets, downloads, and the
services that link and unlink an asset and read a download's links.

Another app imports this module only, never the app's other modules
(``tests/lms/test_layers.py``): what is not here is the app's own, free to change.
"""

from downloads.models import Asset, Download
from downloads.services import link_asset, unlink_asset
from downloads.wire_reads import download_links

__all__ = ["Asset", "Download", "download_links", "link_asset", "unlink_asset"]
