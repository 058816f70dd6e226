"""The media library (assets), downloads, and the ordered links between them.

Invariants the services keep and the database backs up:

- a link's ``org`` is its download's and its asset's organization;
- one link per (download, asset), and one link per (download, seq);
- the links of a download are numbered ``1..n`` without gaps, in their display order.
- a link's display name is trimmed text, not blank, of at most ``NAME_MAX_LENGTH``
  characters, without NUL or a lone surrogate: the edge that reads a name judges it (the
  API's ``LinkAssetInputSerializer``, the admin's link form), and the services store it as
  they get it.

Every index and unique constraint leads with ``org`` (the tenant key), so the foreign keys
to the download and the asset do not get Django's single-column indexes.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from lms.tenancy import OrgScopedModel, org_scoped_key

NAME_MAX_LENGTH = 200


class Asset(OrgScopedModel):
    """An item of the organization's media library: an uploaded file or a URL."""

    name = models.CharField(max_length=NAME_MAX_LENGTH)
    file = models.FileField(upload_to="assets/%Y/%m/", max_length=500, blank=True)
    url = models.URLField("URL", max_length=2000, blank=True)
    content_type = models.CharField(
        max_length=255, blank=True, help_text="MIME type, e.g. application/pdf."
    )
    size = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Size in bytes, when known."
    )

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(file="") & ~Q(url="")) | (~Q(file="") & Q(url="")),
                name="asset_file_xor_url",
                violation_error_message="An asset is either an uploaded file or a URL "
                "(exactly one of the two).",
            ),
        ]
        indexes = [models.Index(fields=["org", "name"], name="asset_org_name")]

    def __str__(self) -> str:
        return self.name


class Download(OrgScopedModel):
    """A digital product: a pack of the organization's assets that a learner gets."""

    name = models.CharField(max_length=NAME_MAX_LENGTH)
    description = models.TextField(blank=True)
    published = models.BooleanField(default=False)

    class Meta:
        ordering = ["name", "id"]
        indexes = [models.Index(fields=["org", "name"], name="download_org_name")]

    def __str__(self) -> str:
        return self.name


class DownloadAsset(OrgScopedModel):
    """One asset of a download, at position ``seq`` (1-based) under ``display_name``.

    Write links only through ``downloads.services``: they lock the download and keep the
    positions ``1..n``. Deleting a link never deletes its asset; an asset that is still
    linked cannot be deleted (RESTRICT), so no position is ever left as a gap.
    """

    download = org_scoped_key(Download, related_name="links")
    asset = org_scoped_key(Asset, related_name="links", on_delete=models.RESTRICT)
    seq = models.PositiveIntegerField("position")
    display_name = models.CharField(max_length=NAME_MAX_LENGTH)

    class Meta:
        verbose_name = "download asset link"
        ordering = ["download", "seq"]
        constraints = [
            models.UniqueConstraint(
                fields=["org", "download", "asset"],
                name="downloadasset_org_download_asset_unique",
                violation_error_message="This asset is already linked to the download.",
            ),
            models.UniqueConstraint(
                fields=["org", "download", "seq"],
                name="downloadasset_org_download_seq_unique",
                violation_error_message="Another link of the download has this position.",
            ),
            models.CheckConstraint(
                condition=Q(seq__gte=1),
                name="downloadasset_seq_positive",
                violation_error_message="Positions start at 1.",
            ),
        ]
        # Counting the downloads that use an asset, and the RESTRICT check when an asset is
        # deleted; (org, download, ...) above already serves the lookups by download.
        indexes = [models.Index(fields=["org", "asset"], name="downloadasset_org_asset")]

    def __str__(self) -> str:
        return f"{self.seq}. {self.display_name}"
