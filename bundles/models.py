"""Bundles: named groups of an organization's catalogue, listed page by page at any scale."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Value
from django.db.models.functions import Lower

from lms.db.collation import CodePointOrder
from lms.models import StampField
from lms.tenancy import (
    AllOrgsManager,
    OrgScopedModel,
    OrgScopedQuerySet,
    org_scoped_key,
    org_unique,
)


class BundleQuerySet(OrgScopedQuerySet):
    def search(self, term: str) -> BundleQuerySet:
        """Bundles whose name contains ``term`` in any case; ``%``, ``_`` and ``\\`` in it
        match only themselves. Both sides are lower-cased by the database's own LOWER, so
        the comparison folds case exactly as the stored ``name_lower`` does; on PostgreSQL
        the trigram index on ``(org, name_lower)`` serves it."""
        return self.filter(name_lower__contains=Lower(Value(term)))


class Bundle(OrgScopedModel):
    """``name_lower`` is ``LOWER(name)``, computed and stored by the database on every
    write. Search and the name sort compare it instead of calling LOWER (or UPPER) on every
    row they look at: on PostgreSQL that call costs about twice as much as the comparison
    itself, which is what a search too short for the trigram index pays a million times.

    Every b-tree index starts with ``org`` and ends with ``id``, the final key of every
    listing order, so each sort the API offers is one index range read forwards or
    backwards, and deep pages skip rows in the index alone (index-only scans). They are all
    ascending: new bundles arrive in ``created_at`` order, and PostgreSQL packs ascending
    inserts into full pages but leaves half-empty ones behind inserts at the front of a
    descending index (figures in docs/performance.md); the default
    ``-createdAt`` reads the index backwards at the same cost. On PostgreSQL a trigram index
    on ``(org, name_lower)`` serves the substring search (migration 0002).

    Not covered: deep pages of a sort that starts with a timestamp and goes on with another
    field read the table for every row they skip (see docs/performance.md)."""

    # As every model's, but a bulk load may keep the records' own times (insert_bundles).
    created_at = StampField(auto_now_add=True)
    updated_at = StampField(auto_now=True)
    name = models.CharField(max_length=200)
    name_lower = models.GeneratedField(
        expression=Lower("name"), output_field=models.TextField(), db_persist=True
    )
    description = models.TextField(blank=True, default="")
    courses = models.ManyToManyField(
        "learn.Course", through="BundleCourse", related_name="bundles", blank=True
    )
    downloads = models.ManyToManyField(
        "downloads.Download", through="BundleDownload", related_name="bundles", blank=True
    )

    all_orgs = AllOrgsManager.from_queryset(BundleQuerySet)()
    objects = BundleQuerySet.as_manager()

    class Meta:
        indexes = [
            models.Index(fields=["org", "created_at", "id"], name="bundle_org_created_idx"),
            models.Index(fields=["org", "updated_at", "id"], name="bundle_org_updated_idx"),
            models.Index(
                models.F("org"),
                CodePointOrder(models.F("name_lower")),
                models.F("id"),
                # Never compared (the id is unique), but with them a sort that starts with
                # name and goes on with a timestamp can skip rows in the index alone too.
                models.F("created_at"),
                models.F("updated_at"),
                name="bundle_org_name_idx",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class BundleItem(OrgScopedModel):
    """What a bundle groups. The item must belong to the bundle's organization; the
    unique constraint starts with ``org`` like every constraint of a tenant table."""

    bundle = org_scoped_key(Bundle)

    item_field: str

    class Meta:
        abstract = True

    def clean(self) -> None:
        super().clean()
        # On an admin add page the bundle is not saved yet but is already attached.
        bundle_attached = type(self).bundle.is_cached(self) or self.bundle_id is not None
        item_attached = getattr(self, f"{self.item_field}_id") is not None
        if not (bundle_attached and item_attached):
            return
        item = getattr(self, self.item_field)
        if item.org_id != self.bundle.org_id:
            raise ValidationError({self.item_field: "Pick one of the bundle's own organization."})

    def save(self, *args, **kwargs):
        self.org_id = self.bundle.org_id  # always the bundle's organization
        super().save(*args, **kwargs)

    def __str__(self) -> str:
        return str(getattr(self, self.item_field))


def _item_meta(item: str) -> type:
    """The ``Meta`` of a bundle's items of one kind: its name, the unique constraint (an
    item once per bundle) and the index, named after the table."""

    class Meta:
        verbose_name = f"{item} in the bundle"
        constraints = [org_unique("bundle", item, name=f"bundle{item}_org_bundle_{item}")]
        indexes = [models.Index(fields=["org", item], name=f"bundle{item}_org_{item}")]

    return Meta


class BundleCourse(BundleItem):
    course = org_scoped_key("learn.Course")
    item_field = "course"
    Meta = _item_meta("course")


class BundleDownload(BundleItem):
    download = org_scoped_key("downloads.Download")
    item_field = "download"
    Meta = _item_meta("download")


class BundleTally(models.Model):
    """How many bundles an organization has.

    Kept by database triggers (migration 0002) in the same transaction as every insert,
    delete or change of organization of a bundle, whatever issues it (the admin, bulk
    inserts, cascades, raw SQL), so it always equals ``COUNT(*)`` of the organization's
    bundles as that transaction sees them. The list answers its unfiltered ``total`` from
    here in one primary-key read (``bundles.wire_reads.total_for``) instead of counting a
    million index entries. Code never writes it. The organization is the primary key, so
    the row cannot belong to another.
    """

    org = models.OneToOneField(
        "organizations.Organization",
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    total = models.BigIntegerField(default=0)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        verbose_name = "bundle tally"

    def __str__(self) -> str:
        return f"{self.total} bundles"
