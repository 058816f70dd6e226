"""The bundle list's reads (contract 4.5).

Page 1 is what nearly every request asks for, so its reads are compiled once per process
per shape (``lms.compiled``: the sort and the page size; the organization and the search
term are bound as values). Deeper pages read through the ORM and ``lms.pagination``'s
machinery for a million rows.
"""

from __future__ import annotations

import uuid

from django.db.models import BigIntegerField, Func, QuerySet, Subquery

from bundles.filters import SortKey, order_by_expressions
from bundles.models import Bundle, BundleTally
from bundles.serializers import LISTED_COLUMNS
from lms.compiled import Compiled
from lms.pagination import window
from lms.wire import wire_columns

Sort = tuple[SortKey, ...]

# The listed columns with ids and timestamps as wire text (``lms.wire``), chosen once: a
# query resolves copies of these expressions, so every list shares them.
_LISTED = tuple(wire_columns(Bundle, LISTED_COLUMNS))


def listed(org_id: uuid.UUID, sort: Sort, search: str | None) -> QuerySet:
    """The organization's bundles as the list reads them (``LISTED_COLUMNS``, ids and
    timestamps as wire text: ``lms.wire``), those whose name contains ``search`` when one is
    given, totally ordered by ``sort`` then the id."""
    bundles = Bundle.objects.for_org(org_id)
    if search:
        bundles = bundles.search(search)
    return bundles.order_by(*order_by_expressions(list(sort))).values_list(*_LISTED)


# Page 1 without a search: the first entries of the sort's index, a plain LIMIT, each row
# with the organization's tally (an uncorrelated scalar subquery, which the database reads
# once): the total comes in the same round trip as the rows.
_FIRST_PAGE = Compiled(
    lambda shape, org_id: listed(org_id, shape[0], None).annotate(
        tally=Subquery(BundleTally.objects.for_org(org_id).values("total")[:1])
    )[: shape[1]]
)
# Page 1 of a search: through the id-only inner query (lms.pagination.page_rows says why).
_FIRST_SEARCH_PAGE = Compiled(
    lambda shape, org_id, search: window(listed(org_id, shape[0], search), 0, shape[1])
)


class CountAll(Func):
    """``COUNT(*)`` as the only column of a select: the query ``QuerySet.count()`` sends,
    written so that it can be compiled once (an aggregate would add a ``GROUP BY``)."""

    template = "COUNT(*)"
    output_field = BigIntegerField()


# How many bundles match a search.
_MATCHES = Compiled(
    lambda org_id, search: Bundle.objects.for_org(org_id).search(search).values_list(CountAll())
)


def matches(org_id: uuid.UUID, search: str) -> int:
    """How many of the organization's bundles a search matches."""
    row = _MATCHES.first(org_id=org_id, search=search)
    return row[0] if row else 0


def first_page(org_id: uuid.UUID, sort: Sort, search: str | None, size: int) -> tuple[list, int]:
    """Page 1's rows and the total, as ``lms.pagination.page_rows`` answers them: the rows
    first; fewer than a page means they are all. A full page without a search takes the
    total from the tally read in the same statement; a search counts its matches."""
    if not search:
        rows = _FIRST_PAGE.rows((sort, size), org_id=org_id)
        total = rows[0][-1] if len(rows) == size else None
        rows = [row[:-1] for row in rows]
        return rows, len(rows) if total is None else total
    rows = _FIRST_SEARCH_PAGE.rows((sort, size), org_id=org_id, search=search)
    return rows, len(rows) if len(rows) < size else matches(org_id, search)
