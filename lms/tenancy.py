"""Tenancy that a subclass cannot forget.

Every tenant-owned model inherits ``OrgScopedModel``; every API view gets its rows from
``OrgScopedViewMixin.scoped()``; every admin of a tenant-owned model inherits
``lms.admin.OrgScopedAdmin``. The organization always comes from the caller's token (API) or the
staff user's memberships (admin), never from the URL or the body.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import models

from lms.errors import NotFound
from lms.ids import parse_id
from lms.models import BaseModel

if TYPE_CHECKING:
    from organizations.models import Organization


class OrgScopedQuerySet(models.QuerySet):
    def for_org(self, org: Organization | Any) -> OrgScopedQuerySet:
        return self.filter(org=org)


class OrgScopedModel(BaseModel):
    """A tenant-owned record. Its organization is fixed once created: moving a record (a
    membership with its tokens, a course with its learners' progress) to another organization
    would carry what belongs to one tenant into another. A form says so (``full_clean``);
    any other write is refused (``save``)."""

    org = models.ForeignKey(
        "organizations.Organization", on_delete=models.CASCADE, related_name="+"
    )

    objects = OrgScopedQuerySet.as_manager()

    @classmethod
    def from_db(cls, db, field_names, values):
        instance = super().from_db(db, field_names, values)
        instance._stored_org_id = instance.__dict__.get("org_id")
        return instance

    def _org_moved(self) -> bool:
        stored = getattr(self, "_stored_org_id", None)
        return stored is not None and self.org_id != stored

    def _org_fixed_message(self) -> str:
        name = self._meta.verbose_name
        return (
            f"The organization of a {name} is fixed once created; create a new {name} in the "
            "other organization instead."
        )

    def full_clean(self, *args, **kwargs) -> None:
        super().full_clean(*args, **kwargs)
        if self._org_moved():
            raise ValidationError(self._org_fixed_message())

    def save(self, *args, **kwargs) -> None:
        if self._org_moved():
            raise ValueError(self._org_fixed_message())
        super().save(*args, **kwargs)
        self._stored_org_id = self.org_id

    class Meta:
        abstract = True


def get_or_404(queryset: models.QuerySet, **lookup: Any) -> Any:
    """The one row the lookup names, or NotFound. Malformed UUIDs are simply not found."""
    for key, value in list(lookup.items()):
        if key == "id" or key.endswith("_id") or key == "pk":
            parsed = parse_id(value)
            if parsed is None:
                raise NotFound(f"No {queryset.model._meta.verbose_name} with that id.")
            lookup[key] = parsed
    try:
        return queryset.get(**lookup)
    except queryset.model.DoesNotExist:
        raise NotFound(f"No {queryset.model._meta.verbose_name} with that id.") from None


class OrgScopedViewMixin:
    """The only place a view gets rows from. Foreign ids look exactly like missing ones."""

    model: type[OrgScopedModel]

    def scoped(self, model: type[OrgScopedModel] | None = None) -> OrgScopedQuerySet:
        return (model or self.model).objects.for_org(self.request.auth.org)

    @property
    def org(self) -> Organization:
        return self.request.auth.org
