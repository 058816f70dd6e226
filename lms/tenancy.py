"""Tenancy that a subclass cannot forget.

Every tenant-owned model inherits ``OrgScopedModel``; every API view gets its rows from
``OrgScopedViewMixin.scoped()``; every admin of a tenant-owned model inherits
``lms.admin.OrgScopedAdmin``. The organization always comes from the caller's token (API) or the
staff user's memberships (admin), never from the URL or the body.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
    org = models.ForeignKey(
        "organizations.Organization", on_delete=models.CASCADE, related_name="+"
    )

    objects = OrgScopedQuerySet.as_manager()

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
