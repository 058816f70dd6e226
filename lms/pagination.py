"""Page-number paging with the ``{rows, total, page, pageSize}`` envelope (docs/api.md, "Bundles"),
shaped so that no page costs more than reading half of the matching rows' index entries;
and the opaque cursors of a feed read after a position (``feed_cursor``)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import QuerySet
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.pagination import BasePagination
from rest_framework.response import Response

from lms.fields import QueryIntegerField, query_value

MAX_PAGE = 9007199254740991  # 2**53 - 1: the largest integer every JSON client reads exactly
DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


class PageParams(serializers.Serializer):
    """The paging parameters: the one statement of their bounds, which the OpenAPI schema
    reads too."""

    page = QueryIntegerField(min_value=1, max_value=MAX_PAGE, default=1)
    pageSize = QueryIntegerField(min_value=1, max_value=MAX_PAGE_SIZE, default=DEFAULT_PAGE_SIZE)


def _param_schema(name: str, *, default: bool = False) -> dict:
    """The JSON schema of a paging parameter, from its field in ``PageParams``."""
    field = PageParams().fields[name]
    schema = {"type": "integer", "minimum": field.min_value, "maximum": field.max_value}  # type: ignore[attr-defined]
    if default:
        schema["default"] = field.default
    return schema


@dataclass(frozen=True)
class Page:
    number: int
    size: int

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size


# Built once: a serializer deep-copies its fields each time it is instantiated.
_PAGE_FIELDS = PageParams().fields


def read_page(request) -> Page:
    """The requested page; raises DRF's ValidationError naming each bad parameter, as
    ``PageParams(data=...).is_valid(raise_exception=True)`` does."""
    values, errors = {}, {}
    for name, field in _PAGE_FIELDS.items():
        try:
            values[name] = field.run_validation(field.get_value(request.query_params))
        except serializers.ValidationError as exc:
            errors[name] = exc.detail
    if errors:
        raise serializers.ValidationError(errors)
    return Page(values["page"], values["pageSize"])


# Below this many matching rows a page is read with a plain OFFSET: skipping fewer index
# entries than that costs less than composing the id-only inner query.
PLAIN_BELOW = 1000


def page_rows(queryset: QuerySet, page: Page, count: Callable[[], int]) -> tuple[list, int]:
    """The rows of ``page`` of the ordered ``queryset`` and the total, in at most two queries.

    - Page 1 reads its rows first; fewer than a page means they are all, and nothing is
      counted.
    - Any other page counts first; a page that starts at or past the end answers no rows
      without reading any (so a huge page number never reaches the database as an OFFSET).
    - A page nearer the end than the start is read in the reverse order from the end, so
      the deepest page costs no more than the middle one.
    - The page is chosen by an inner query that reads only ids, in the order of the sort's
      index, and only its rows are then fetched whole. Skipped rows, and rows a search
      rejects, are then read from the index alone (an index-only scan) where it holds
      every column involved, instead of one table row each.

    - The inner query is skipped (a plain ``LIMIT``/``OFFSET`` on the queryset) where it
      cannot pay: whenever fewer than ``PLAIN_BELOW`` rows match.

    ``queryset`` must be totally ordered (the id as its last key), so each row is on
    exactly one page.
    """
    if page.offset == 0:
        rows = list(window(queryset, 0, page.size))
        return rows, len(rows) if len(rows) < page.size else count()
    total = count()
    if page.offset >= total:
        return [], total
    if total < PLAIN_BELOW:
        return list(queryset[page.offset : page.offset + page.size]), total
    rows_after = total - page.offset - page.size
    if rows_after < page.offset:  # nearer the end: count positions from the end
        order, start, stop = queryset.reverse(), max(rows_after, 0), total - page.offset
    else:
        order, start, stop = queryset, page.offset, page.offset + page.size
    return list(window(queryset, start, stop, order)), total


def window(queryset: QuerySet, start: int, stop: int, order: QuerySet | None = None) -> QuerySet:
    """Rows ``start:stop`` of ``order`` (the queryset, or its reverse), in the queryset's
    order, chosen by an inner query that reads only ids."""
    return queryset.filter(pk__in=(queryset if order is None else order).values("pk")[start:stop])


def envelope(rows: list, total: int, page: Page) -> dict:
    """A page's answer: ``{"rows": [...], "total": N, "page": P, "pageSize": S}``."""
    return {"rows": rows, "total": total, "page": page.number, "pageSize": page.size}


class EnvelopePagination(BasePagination):
    """Answers ``{"rows": [...], "total": N, "page": P, "pageSize": S}``.

    The total is ``COUNT(*)`` of the filtered queryset (see ``page_rows``). The bundle list
    pages on its own (``bundles.wire_reads``) and uses this class for its schema.
    """

    def paginate_queryset(self, queryset, request, view=None) -> list:
        self.page = read_page(request)
        rows, self.total = page_rows(queryset, self.page, queryset.count)
        return rows

    def get_paginated_response(self, data) -> Response:
        return Response(envelope(data, self.total, self.page))

    def get_paginated_response_schema(self, schema: dict) -> dict:
        return {
            "type": "object",
            "required": ["rows", "total", "page", "pageSize"],
            "properties": {
                "rows": schema,
                "total": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "How many rows match, over all pages.",
                },
                "page": _param_schema("page"),
                "pageSize": _param_schema("pageSize"),
            },
        }

    def get_schema_operation_parameters(self, view) -> list[dict]:
        return [
            {
                "name": "page",
                "in": "query",
                "required": False,
                "description": "1-based page number. A page past the end answers no rows "
                "and the true total. Not an integer or out of range: 400.",
                "schema": _param_schema("page", default=True),
            },
            {
                "name": "pageSize",
                "in": "query",
                "required": False,
                "description": "Rows per page. Not an integer or out of range: 400 "
                "(never clamped).",
                "schema": _param_schema("pageSize", default=True),
            },
        ]


# --- Feed cursors ---------------------------------------------------------------------------
# A feed (the completions feed, 9.6) is read after a position its last answer ended at. The
# position travels as an opaque cursor: base64url (no padding) of a version byte and the
# position as 8 bytes, so the format can change without breaking a client that stores it.
CURSOR_VERSION = 1
_CURSOR_BYTES = 9
_CURSOR_TEXT = 12  # base64 of 9 bytes: no padding to strip


def feed_cursor(position: int) -> str:
    """The cursor that continues after ``position`` (0: from the start)."""
    raw = bytes([CURSOR_VERSION]) + position.to_bytes(_CURSOR_BYTES - 1, "big")
    return base64.urlsafe_b64encode(raw).decode("ascii")


def read_feed_cursor(text: str) -> int | None:
    """The position a cursor of ``feed_cursor`` continues after; None for any other text (a
    different length, another alphabet, another version, a position past 2**63 - 1)."""
    if len(text) != _CURSOR_TEXT:
        return None
    try:
        raw = base64.b64decode(text.encode("ascii"), altchars=b"-_", validate=True)
    except (ValueError, UnicodeEncodeError):
        return None
    position = int.from_bytes(raw[1:], "big")
    if raw[0] != CURSOR_VERSION or position >= 2**63 or feed_cursor(position) != text:
        return None  # the last: "+" or "/" for "-" or "_", which b64decode also takes
    return position


class FeedCursorField(serializers.CharField):
    """A feed's ``after``: read into the position its cursor continues after."""

    default_error_messages = {"invalid": "Not a cursor this API answered."}

    def __init__(self, **kwargs) -> None:
        super().__init__(trim_whitespace=False, **kwargs)

    def get_value(self, dictionary):
        # An empty form value ("after=") is a value, and no cursor.
        return query_value(self, dictionary)

    def run_validation(self, data=empty):
        if data == "":  # CharField answers "" before to_internal_value sees it
            self.fail("invalid")
        return super().run_validation(data)

    def to_internal_value(self, data) -> int:  # type: ignore[override]
        position = read_feed_cursor(data) if isinstance(data, str) else None
        if position is None:
            self.fail("invalid")
        return position


class PagedRows(serializers.ListSerializer):
    """The rows of a list that a read of its own answers in the envelope, a page at a time,
    as its view's schema says it: ``extend_schema(responses=paged(RowSerializer))``. The
    schema (``lms.schema.ApiAutoSchema``) wraps them in the envelope of ``EnvelopePagination``
    and adds its ``page`` and ``pageSize``; the view declares no serializer, queryset or
    paginator that its ``get`` would not use."""


def paged(serializer_class: type[serializers.Serializer]) -> PagedRows:
    return PagedRows(child=serializer_class())
