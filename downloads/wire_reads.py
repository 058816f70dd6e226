"""The reads of a download's links, rows of ``downloads.serializers.LINK``: the list of links
(8.4), and the links that link and unlink read under the download's lock and answer.

A link is read as ``LINK.record``: the values of ``LINK.sources`` as Python values (the
writes compare and insert them), which ``LINK.bodies_of`` answers. Each read is compiled
once per process (``lms.db.compiled``) and prepared.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from downloads.models import Download, DownloadAsset
from downloads.serializers import LINK
from lms.db.compiled import Compiled
from lms.ids import parse_id
from lms.tenancy import OrgRef, org_id_of

# A link as the API's writes read and answer it: the values of ``LINK.sources`` (Python
# values: UUIDs, aware datetimes), not a model instance. A named tuple made when the module
# loads, so one the type checker cannot see: to it, any value.
if TYPE_CHECKING:
    Link = Any
else:
    Link = LINK.record

_DOWNLOAD = Compiled(
    lambda org_id, id: Download.objects.for_org(org_id).filter(id=id).values_list("id"),
    prepare=True,
)
_LINKS = Compiled(
    lambda org_id, download_id: (
        DownloadAsset.objects.for_org(org_id)
        .filter(download_id=download_id)
        .order_by("seq")
        .values_list(*LINK.sources)
    ),
    prepare=True,
)


def current_links(download: Download) -> list[Link]:
    """The download's links in order, as rows (``download``: its id and organization)."""
    return [Link._make(row) for row in _LINKS.rows(org_id=download.org_id, download_id=download.id)]


def download_links(*, org: OrgRef, download_id: uuid.UUID | str | None) -> list[Link]:
    """The download's links ordered by ``seq``, as link and unlink answer them, read as
    their writes read them (``current_links``) and without a lock. Raises NotFound when the
    download is not in ``org`` (a malformed id included). One query when the download has
    links (they are in its organization, so it exists there); a second, for the download
    itself, only when it has none."""
    org_id = org_id_of(org)
    wanted = parse_id(download_id)
    links = [] if wanted is None else current_links(Download(id=wanted, org_id=org_id))
    if not links:
        _DOWNLOAD.one_or_404(Download, org_id=org_id, id=download_id)
    return links
