"""Tenancy that fails closed.

Every tenant-owned model inherits ``OrgScopedModel``. Its ``objects`` manager refuses to run
a query that names no organization (``UnscopedQuery``): API views read through
``OrgScopedViewMixin.scoped()`` (the caller's organization, from its token), services and
selectors through ``.for_org(org)`` or a filter on ``org``, and a record's related rows
(``membership.tokens``) are of its organization. Reading across organizations is written
out as ``Model.all_orgs``: superusers' admin pages, commands, the token and invite lookups
(how a request finds its organization) and Django's own machinery (it is the default
manager: docs/architecture.md says which machinery, none of it on the API path). Every
admin of a tenant-owned model inherits ``lms.admin.OrgScopedAdmin``, which narrows a staff
member's pages to their organizations. The organization always comes from the caller's
token (API) or the staff user's memberships (admin), never from the URL or the body, and a
record's organization is fixed once created.
"""

from __future__ import annotations

import uuid
from typing import Any, Self

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from lms.errors import NotFound
from lms.ids import parse_id
from lms.models import BaseModel

# An organization as a query names it: the tenant model's record, or its id.
OrgRef = models.Model | uuid.UUID


def org_id_of(org: OrgRef) -> uuid.UUID:
    """The id of ``org``, given as its record or as the id."""
    return org if isinstance(org, uuid.UUID) else org.pk


class UnscopedQuery(RuntimeError):
    """A query of tenant-owned rows that names no organization."""


def _names_org(lookups) -> bool:
    return any(str(key).split("__", 1)[0] in ("org", "org_id") for key in lookups)


def _q_names_org(q: Any) -> bool:
    """Whether a Q (AND-ed, not negated) filters on the organization."""
    if not isinstance(q, Q) or q.negated or q.connector != Q.AND:
        return False
    return any(
        _q_names_org(child) if isinstance(child, Q) else _names_org([child[0]])  # type: ignore[index]
        for child in q.children
    )


class OrgScopedQuerySet(models.QuerySet):
    """Rows of a tenant-owned model, which fail closed: evaluating the queryset raises
    ``UnscopedQuery`` unless it was narrowed to an organization (``for_org``, or a filter on
    ``org``/``org_id``), reached from a record (``membership.tokens.all()``: a record's
    related rows are of its organization), or opened deliberately across organizations
    (``across_orgs()``, or the model's ``all_orgs`` manager)."""

    _org_scoped = False

    def for_org(self, org: OrgRef) -> Self:
        return self.filter(org=org)

    def across_orgs(self) -> Self:
        """Every organization's rows: for superusers' admin pages, commands and migrations."""
        clone = self._chain()  # type: ignore[attr-defined]  # private: docs/architecture.md "Upgrading Django"
        clone._org_scoped = True
        return clone

    def _clone(self):
        clone = super()._clone()
        clone._org_scoped = self._org_scoped
        return clone

    def _filter_or_exclude(self, negate, args, kwargs):
        clone = super()._filter_or_exclude(negate, args, kwargs)
        if not negate and (_names_org(kwargs) or any(_q_names_org(q) for q in args)):
            clone._org_scoped = True
        return clone

    def _check_scope(self) -> None:
        hints = self._hints  # type: ignore[attr-defined]  # private: docs/architecture.md "Upgrading Django"
        if self._org_scoped or hints.get("instance") is not None or self.query.is_empty():
            return
        name = self.model.__name__
        raise UnscopedQuery(
            f"A query of {name} rows without an organization: narrow it with .for_org(org) "
            f"or a filter on org, or read across organizations on purpose with "
            f"{name}.all_orgs."
        )

    def _fetch_all(self):
        if self._result_cache is None:
            self._check_scope()
        super()._fetch_all()

    def iterator(self, *args, **kwargs):
        self._check_scope()
        return super().iterator(*args, **kwargs)

    def count(self):
        if self._result_cache is None:
            self._check_scope()
        return super().count()

    def exists(self):
        if self._result_cache is None:
            self._check_scope()
        return super().exists()

    def aggregate(self, *args, **kwargs):
        self._check_scope()
        return super().aggregate(*args, **kwargs)

    def update(self, **kwargs):
        self._check_scope()
        return super().update(**kwargs)

    def delete(self):
        self._check_scope()
        return super().delete()

    def bulk_update(self, objs, *args, **kwargs):
        # Names its rows one by one (their primary keys): as scoped as the records given.
        return super(OrgScopedQuerySet, self.across_orgs()).bulk_update(objs, *args, **kwargs)


class AllOrgsManager(models.Manager):
    """``Model.all_orgs``: reads across organizations, said in the code where it happens."""

    def get_queryset(self):
        return super().get_queryset().across_orgs()


class OrgScopedModel(BaseModel):
    """A tenant-owned record. Its organization is fixed once created: moving a record (a
    membership with its tokens, a course with its learners' progress) to another organization
    would carry what belongs to one tenant into another. A form says so (``full_clean``);
    any other write is refused (``save``)."""

    org = models.ForeignKey(settings.LMS_TENANT_MODEL, on_delete=models.CASCADE, related_name="+")

    # Declared first, so Django's own machinery (its default manager: unique checks, admin
    # lookups, related choices) reads rows by id; the admin narrows them per staff member.
    all_orgs = AllOrgsManager.from_queryset(OrgScopedQuerySet)()
    # What code uses: fails closed without an organization.
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


def org_scoped_key(
    to: Any, *, related_name: str | None = None, on_delete: Any = models.CASCADE
) -> models.ForeignKey:
    """A foreign key between tenant-owned tables. It gets no index of its own: every index
    and unique constraint of such a table starts with ``org``, and one of them serves it."""
    return models.ForeignKey(to, on_delete=on_delete, related_name=related_name, db_index=False)


def org_unique(*fields: str, name: str) -> models.UniqueConstraint:
    """A unique constraint of a tenant table: unique within an organization, so it starts
    with ``org`` like every index of such a table."""
    return models.UniqueConstraint(fields=["org", *fields], name=name)


def not_found(model: type[models.Model]) -> NotFound:
    """What a missing, foreign or malformed id of ``model`` answers."""
    return NotFound(f"No {model._meta.verbose_name} with that id.")


def ids_or_404(model: type[models.Model], lookup: dict[str, Any]) -> dict[str, Any]:
    """The lookup with its ids (``id``, ``pk``, ``*_id``) parsed; a malformed one is simply
    not found (``not_found(model)``)."""
    parsed = dict(lookup)
    for key, value in lookup.items():
        if key == "id" or key.endswith("_id") or key == "pk":
            parsed[key] = parse_id(value)
            if parsed[key] is None:
                raise not_found(model)
    return parsed


def get_or_404(queryset: models.QuerySet, **lookup: Any) -> Any:
    """The one row the lookup names, or NotFound. Malformed UUIDs are simply not found."""
    try:
        return queryset.get(**ids_or_404(queryset.model, lookup))
    except queryset.model.DoesNotExist:
        raise not_found(queryset.model) from None


class OrgScopedViewMixin:
    """The only place a view gets rows from. Foreign ids look exactly like missing ones."""

    model: type[OrgScopedModel]
    request: Any  # the view's DRF request

    def scoped(self, model: type[OrgScopedModel] | None = None) -> OrgScopedQuerySet:
        return (model or self.model).objects.for_org(self.request.auth.org)

    @property
    def org(self) -> Any:  # the caller's organization (settings.LMS_TENANT_MODEL)
        return self.request.auth.org
