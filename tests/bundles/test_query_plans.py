"""On PostgreSQL the list's queries can be answered from the indexes built for them.

Sequential scans and sorts are switched off, so a plan without them proves that an index
matches the query exactly (columns, order, and the name's "C" collation); the benchmark
(bench/bundles.py) shows the planner choosing them by itself at a million rows.
"""

import pytest
from django.db import connection

from bundles.filters import BundleFilterSet
from bundles.models import Bundle
from tests.bundles.factories import add_bundles

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def plan(org, **query) -> str:
    queryset = BundleFilterSet(data=query, queryset=Bundle.all_orgs.for_org(org)).qs
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("SET LOCAL enable_incremental_sort = off")
    return queryset[:20].explain()


@pytest.mark.parametrize(
    "sort, index",
    [
        ("-createdAt", "bundle_org_created_idx"),
        ("createdAt", "bundle_org_created_idx"),
        ("updatedAt", "bundle_org_updated_idx"),
        ("-updatedAt", "bundle_org_updated_idx"),
        ("name", "bundle_org_name_idx"),
        ("-name", "bundle_org_name_idx"),
    ],
)
def test_each_sort_is_an_index_range_without_a_sort(org, sort, index):
    add_bundles(org, [f"B{i}" for i in range(50)])
    text = plan(org, sort=sort)
    assert f"using {index}" in text and "Sort" not in text, text


def test_the_trigram_index_matches_the_search_expression(org):
    """The trigram index holds exactly what the search compares; with every other access
    path switched off, the search can only be answered through it. (Which index the
    planner prefers at scale is shown by the benchmark.)"""
    add_bundles(org, [f"Bundle {i}" for i in range(100)] + ["Python"])
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
    queryset = BundleFilterSet(data={"search": "ytho"}, queryset=Bundle.all_orgs.all()).qs
    text = queryset.order_by().explain()
    assert "Bitmap Index Scan on bundle_org_name_trgm_idx" in text, text
