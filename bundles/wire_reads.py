"""The reads on the bundle list's hot path (docs/api.md, "Bundles"), answering the wire's text.

``bundle_page`` answers a page. Page 1 is what nearly every request asks for, so its reads
are compiled once per process per shape (``lms.db.compiled``: the sort and the page size;
the organization and the search term are bound as values), and prepared on PostgreSQL for
the organizations known to be small (``SMALL_ORGANIZATION``). Rows hold ids and timestamps
as wire text (``bundles.serializers.BUNDLE``), ready for ``BUNDLE.bodies``. Deeper pages
read through the ORM and ``lms.pagination``'s machinery for a million rows; the unfiltered
total through ``total_for``.
"""

from __future__ import annotations

import uuid
from functools import partial

from django.db.models import BigIntegerField, Func, QuerySet, Subquery

from bundles.filters import SortKey, order_by_expressions
from bundles.models import Bundle, BundleTally
from bundles.serializers import BUNDLE
from lms.db.compiled import Compiled, PrepareWhenSmall
from lms.pagination import Page, page_rows, window

Sort = tuple[SortKey, ...]


def listed(org_id: uuid.UUID, sort: Sort, search: str | None) -> QuerySet:
    """The organization's bundles as the list reads them (``BUNDLE.columns``: ids and
    timestamps as wire text, ``lms.db.wire``), those whose name contains ``search`` when one
    is given, totally ordered by ``sort`` then the id."""
    bundles = Bundle.objects.for_org(org_id)
    if search:
        bundles = bundles.search(search)
    return bundles.order_by(*order_by_expressions(list(sort))).values_list(*BUNDLE.columns)


# Page 1 and the search count are prepared (``lms.db.compiled``'s ``prepare``: PostgreSQL
# plans them once per connection, then keeps a generic plan) only for an organization this
# process has seen to hold at most ``SMALL_ORGANIZATION`` bundles; any other is planned for
# its own values on every request. A generic plan is made for an average organization and
# term: in a table where most organizations are small it reads an organization's bundles by
# the organization's index and sorts them, which for a very large organization's page takes
# orders of magnitude longer than its own plan reading one index entry a row. Run for at
# most ``SMALL_ORGANIZATION`` bundles, the worst generic plan stays cheap, and preparing
# spares a small organization's read its planning (figures: docs/performance.md).
SMALL_ORGANIZATION = 1_000


# The organizations' sizes as their page-1 reads last told them (every page-1 read answers
# its organization's tally), at most 4,096 of them; the page-1 reads and the search count
# ask it on every call. An organization not seen yet, or seen larger, is read with its own
# plan; one that grew since its last read is read once more prepared, which tells its new
# size.
SMALL = PrepareWhenSmall(key="org_id", limit=SMALL_ORGANIZATION)


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


_FIRST_PAGE = Compiled(_page_one, prepare=SMALL)
_FIRST_SEARCH_PAGE = Compiled(_search_page_one, prepare=SMALL)


class CountAll(Func):
    """``COUNT(*)`` as the only column of a select: the query ``QuerySet.count()`` sends,
    written so that it can be compiled once (an aggregate would add a ``GROUP BY``)."""

    template = "COUNT(*)"
    output_field = BigIntegerField()


def _count_matches(org_id: uuid.UUID, search: str) -> QuerySet:
    return Bundle.objects.for_org(org_id).search(search).values_list(CountAll())


# How many bundles match a search.
_MATCHES = Compiled(_count_matches, prepare=SMALL)


def matches(org_id: uuid.UUID, search: str) -> int:
    """How many of the organization's bundles a search matches (prepared for an
    organization known to be small)."""
    row = _MATCHES.first(org_id=org_id, search=search)
    return row[0] if row else 0


_TALLY = Compiled(
    lambda org_id: BundleTally.objects.for_org(org_id).values_list("total"), prepare=True
)


def total_for(org) -> int:
    """The organization's (or the organization id's) number of bundles, 0 before its first
    bundle (``BundleTally``): one primary-key read, its SQL compiled once per process."""
    row = _TALLY.first(org_id=getattr(org, "pk", org))
    return row[0] if row else 0


def first_page(org_id: uuid.UUID, sort: Sort, search: str | None, size: int) -> tuple[list, int]:
    """Page 1's rows and the total, as ``lms.pagination.page_rows`` answers them: the rows
    first; fewer than a page means they are all. A full page without a search takes the
    total from the tally read in the same statement; a search counts its matches."""
    if search:
        rows = _FIRST_SEARCH_PAGE.rows((sort, size), org_id=org_id, search=search)
    else:
        rows = _FIRST_PAGE.rows((sort, size), org_id=org_id)
    if not rows:
        return [], 0
    tally = rows[0][-1]
    if tally is not None:
        SMALL.note(org_id, tally)
    rows = [row[:-1] for row in rows]
    if len(rows) < size:
        return rows, len(rows)
    if search:
        return rows, matches(org_id, search)
    return rows, len(rows) if tally is None else tally


def bundle_page(org_id: uuid.UUID, page: Page, sort: Sort, search: str) -> tuple[list, int]:
    """A page of the organization's bundles (``listed``: ``search`` "" for none) and how
    many there are: page 1 through ``first_page``, a deeper one through
    ``lms.pagination.page_rows``, counted by ``matches`` or the tally (``total_for``)."""
    if page.offset == 0:
        return first_page(org_id, sort, search, page.size)
    count = partial(matches, org_id, search) if search else partial(total_for, org_id)
    return page_rows(listed(org_id, sort, search), page, count)
