"""A course's roster as CSV (9.4's ``Accept: text/csv``), for the API's roster view and the
admin's report page alike: every row the filters and sort select (paging ignored), streamed
(``lms.web.csv_export``).

The rows are ``learn.wire_reads.roster``'s, read through one server-side cursor (one query,
so one snapshot of the roster, ``CHUNK_ROWS`` rows a fetch: the memory of a chunk whatever
the number of rows), each built as the JSON roster builds it (``roster_row``), so the two
never differ. They are read after the view has returned, while the body is sent, in the
request's context (``lms.web.csv_export``): where the request's other reads are, the
replica for an API read request that may use it (the same read-your-writes rules), the
primary for the admin."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from django.http import StreamingHttpResponse
from django.utils import timezone

from learn.serializers import ROSTER_ROW
from learn.wire_reads import RosterFilters, roster, roster_row
from lms.sorting import SortKey
from lms.web.csv_export import CHUNK_ROWS, cells, csv_response

DEFAULT_SORT = (SortKey("enrolledAt", descending=True),)


def roster_csv_response(
    org_id: uuid.UUID,
    course_id: uuid.UUID,
    filters: RosterFilters,
    sort: Sequence[SortKey] = DEFAULT_SORT,
) -> StreamingHttpResponse:
    """The course's roster as the download ``<courseId>-enrollments.csv``, with 9.4's wire
    names as its header; the course is the caller's to check."""
    read = roster(org_id, course_id, filters, sort, timezone.now())
    rows = (roster_row(row) for row in read.iterator(chunk_size=CHUNK_ROWS))
    return csv_response(
        ROSTER_ROW.names, cells(ROSTER_ROW, rows), filename=f"{course_id}-enrollments.csv"
    )
