"""The bundle list's reads (contract 4.5).

Page 1 is what nearly every request asks for, so its reads are compiled once per process
per shape (``lms.db.compiled``: the sort and the page size; the organization and the search
term are bound as values), and prepared on PostgreSQL for the organizations known to be
small (``SMALL_ORGANIZATION``). Deeper pages read through the ORM and ``lms.pagination``'s
machinery for a million rows.
"""

from __future__ import annotations

import threading
import uuid

from django.db.models import BigIntegerField, Func, QuerySet, Subquery

from bundles.filters import SortKey, order_by_expressions
from bundles.models import Bundle, BundleTally
from bundles.serializers import LISTED_COLUMNS
from lms.db.compiled import Compiled
from lms.db.wire import wire_columns
from lms.pagination import window

Sort = tuple[SortKey, ...]

# The listed columns with ids and timestamps as wire text (``lms.db.wire``), chosen once: a
# query resolves copies of these expressions, so every list shares them.
_LISTED = tuple(wire_columns(Bundle, LISTED_COLUMNS))


def listed(org_id: uuid.UUID, sort: Sort, search: str | None) -> QuerySet:
    """The organization's bundles as the list reads them (``LISTED_COLUMNS``, ids and
    timestamps as wire text: ``lms.db.wire``), those whose name contains ``search`` when one is
    given, totally ordered by ``sort`` then the id."""
    bundles = Bundle.objects.for_org(org_id)
    if search:
        bundles = bundles.search(search)
    return bundles.order_by(*order_by_expressions(list(sort))).values_list(*_LISTED)


# Page 1 is prepared (``lms.db.compiled``'s ``prepare=True``: PostgreSQL plans it once per
# connection, then keeps a generic plan) only for an organization this process has seen to
# hold at most ``SMALL_ORGANIZATION`` bundles; any other is planned for its own values on
# every request. A generic plan is made for an average organization and term: in a table
# where most organizations are small it reads an organization's bundles by the
# organization's index and sorts them, which for a very large organization's page takes
# orders of magnitude longer than its own plan reading one index entry a row. Run for at most
# ``SMALL_ORGANIZATION`` bundles, the worst generic plan stays cheap, and preparing spares a
# small organization's read its planning (figures: docs/performance.md).
SMALL_ORGANIZATION = 1_000


class KnownSizes:
    """How many bundles each organization held at its last page-1 read in this process
    (every page-1 read answers its organization's tally). An organization not seen yet, or
    seen larger, is read with its own plan; one that grew since its last read is read
    once with the small organizations' plan, which tells its new size. At most ``limit``
    organizations are kept; beyond it the oldest half is forgotten."""

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._sizes: dict[uuid.UUID, int] = {}
        self._lock = threading.Lock()

    def small(self, org_id: uuid.UUID) -> bool:
        size = self._sizes.get(org_id)
        return size is not None and size <= SMALL_ORGANIZATION

    def note(self, org_id: uuid.UUID, size: int) -> None:
        if len(self._sizes) >= self.limit and org_id not in self._sizes:
            with self._lock:
                for stale in list(self._sizes)[: self.limit // 2]:
                    self._sizes.pop(stale, None)
        self._sizes[org_id] = size

    def clear(self) -> None:
        self._sizes.clear()


known_sizes = KnownSizes()


def _with_tally(queryset: QuerySet, org_id: uuid.UUID) -> QuerySet:
    """Each row with the organization's tally as its last column: an uncorrelated scalar
    subquery, which the database reads once, so the size comes in the rows' round trip."""
    return queryset.annotate(
        tally=Subquery(BundleTally.objects.for_org(org_id).values("total")[:1])
    )


def _page_one(shape: tuple[Sort, int], org_id: uuid.UUID) -> QuerySet:
    """Page 1 without a search: the first entries of the sort's index, a plain LIMIT."""
    return _with_tally(listed(org_id, shape[0], None), org_id)[: shape[1]]


def _search_page_one(shape: tuple[Sort, int], org_id: uuid.UUID, search: str) -> QuerySet:
    """Page 1 of a search: through the id-only inner query (lms.pagination.page_rows says
    why)."""
    return _with_tally(window(listed(org_id, shape[0], search), 0, shape[1]), org_id)


# Each read twice: planned per request, and prepared (for the small organizations).
_FIRST_PAGE = (Compiled(_page_one), Compiled(_page_one, prepare=True))
_FIRST_SEARCH_PAGE = (Compiled(_search_page_one), Compiled(_search_page_one, prepare=True))


class CountAll(Func):
    """``COUNT(*)`` as the only column of a select: the query ``QuerySet.count()`` sends,
    written so that it can be compiled once (an aggregate would add a ``GROUP BY``)."""

    template = "COUNT(*)"
    output_field = BigIntegerField()


def _count_matches(org_id: uuid.UUID, search: str) -> QuerySet:
    return Bundle.objects.for_org(org_id).search(search).values_list(CountAll())


# How many bundles match a search.
_MATCHES = (Compiled(_count_matches), Compiled(_count_matches, prepare=True))


def matches(org_id: uuid.UUID, search: str, *, small: bool = False) -> int:
    """How many of the organization's bundles a search matches (``small``: the organization
    is known to be small, and the count is prepared)."""
    row = _MATCHES[small].first(org_id=org_id, search=search)
    return row[0] if row else 0


def first_page(org_id: uuid.UUID, sort: Sort, search: str | None, size: int) -> tuple[list, int]:
    """Page 1's rows and the total, as ``lms.pagination.page_rows`` answers them: the rows
    first; fewer than a page means they are all. A full page without a search takes the
    total from the tally read in the same statement; a search counts its matches."""
    small = known_sizes.small(org_id)
    if search:
        rows = _FIRST_SEARCH_PAGE[small].rows((sort, size), org_id=org_id, search=search)
    else:
        rows = _FIRST_PAGE[small].rows((sort, size), org_id=org_id)
    if not rows:
        return [], 0
    tally = rows[0][-1]
    if tally is not None:
        known_sizes.note(org_id, tally)
    rows = [row[:-1] for row in rows]
    if len(rows) < size:
        return rows, len(rows)
    if search:
        small = tally is not None and tally <= SMALL_ORGANIZATION
        return rows, matches(org_id, search, small=small)
    return rows, len(rows) if tally is None else tally
