"""Reads of downloads answering domain values, for the link and unlink writes: the download
locked, and an asset's name. Each is a compiled read (``lms.db.compiled``), prepared: the
writes run them on every request."""

from __future__ import annotations

import uuid

from downloads.models import Asset, Download
from lms.db.compiled import Compiled
from lms.tenancy import OrgRef, org_id_of

_DOWNLOAD_LOCK = Compiled(
    lambda org_id, id: (
        Download.objects.for_org(org_id).select_for_update().filter(id=id).values_list("id")
    ),
    prepare=True,
)
_ASSET_NAME = Compiled(
    lambda org_id, id: Asset.objects.for_org(org_id).filter(id=id).values_list("name"), prepare=True
)


def locked_download(org: OrgRef, download_id: uuid.UUID | str) -> Download:
    """Locks the download's row (``SELECT ... FOR UPDATE`` where the database has it) and
    answers it as an unsaved ``Download`` holding only its id and organization: all the
    services need of it. NotFound when it is not in ``org`` (a malformed id included)."""
    org_id = org_id_of(org)
    (download_id,) = _DOWNLOAD_LOCK.one_or_404(Download, org_id=org_id, id=download_id)
    return Download(id=download_id, org_id=org_id)


def asset_name(download: Download, asset_id: uuid.UUID | None) -> str:
    """The name of the asset of the download's organization, or NotFound."""
    return _ASSET_NAME.one_or_404(Asset, org_id=download.org_id, id=asset_id)[0]
