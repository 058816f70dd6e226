"""Tenancy fails closed: every tenant-owned model's ``objects`` refuses a query that names no
organization, so a view that forgets ``for_org`` fails in its first test instead of reading
every organization. Reading across organizations is a visible choice: ``all_orgs``."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db.models import Count

from lms.tenancy import OrgScopedModel, UnscopedQuery
from tests.helpers import make_member

pytestmark = pytest.mark.django_db

TENANT_MODELS = sorted(
    (m for m in apps.get_models() if issubclass(m, OrgScopedModel)), key=lambda m: m._meta.label
)


def test_there_are_tenant_owned_models_to_walk():
    assert len(TENANT_MODELS) >= 15


@pytest.mark.parametrize("model", TENANT_MODELS, ids=lambda m: m._meta.label)
@pytest.mark.parametrize(
    "query",
    [
        lambda qs: list(qs.all()),
        lambda qs: qs.filter(pk__isnull=False).first(),
        lambda qs: qs.count(),
        lambda qs: qs.exists(),
        lambda qs: list(qs.values_list("pk", flat=True)),
        lambda qs: list(qs.iterator()),
        lambda qs: qs.aggregate(n=Count("pk")),
        lambda qs: qs.filter(pk=None).update(updated_at=None),
        lambda qs: qs.filter(pk=None).delete(),
        lambda qs: qs.exclude(org=None).count(),  # excluding is not narrowing
    ],
    ids=[
        "all",
        "first",
        "count",
        "exists",
        "values",
        "iterator",
        "aggregate",
        "update",
        "delete",
        "exclude",
    ],
)
def test_an_unscoped_query_raises(model, query):
    with pytest.raises(UnscopedQuery, match=model.__name__):
        query(model.objects)


@pytest.mark.parametrize("model", TENANT_MODELS, ids=lambda m: m._meta.label)
def test_a_scoped_or_deliberate_query_runs(model, org):
    assert model.objects.for_org(org).count() == 0
    assert model.objects.filter(org_id=org.id).exists() is False
    assert list(model.objects.filter(org__in=[org]).values_list("pk", flat=True)) == []
    assert model.all_orgs.filter(org=None).count() == 0
    assert model.objects.none().count() == 0


def test_a_records_related_rows_count_as_scoped(org):
    member = make_member(org)
    assert member.membership.tokens.count() == 1  # the member's token, of its organization
