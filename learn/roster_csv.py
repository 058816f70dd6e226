"""A course's roster as CSV (9.4's ``Accept: text/csv``), for the API's roster view and the
admin's report page alike: every row the filters and sort select, streamed
(``lms.web.csv_export``), read as wire text (``learn.wire_reads.roster_lines``).

The rows are read after the view has returned, while the body is sent, in the request's
context (``lms.web.csv_export``), so they are read where the request's other reads are: the
replica for an API read request that may use it (with the same read-your-writes rules), the
primary for the admin."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet
from django.http import StreamingHttpResponse

from learn.models import Enrollment
from learn.serializers import ROSTER_CSV_ROW
from learn.wire_reads import roster_lines
from lms.web.csv_export import CHUNK_ROWS, cells, csv_response


def roster_csv_response(
    enrollments: QuerySet[Enrollment], *, listed: int, course_id: uuid.UUID
) -> StreamingHttpResponse:
    """``enrollments`` (a ``learn.selectors.roster``, filtered and ordered; ``listed``: how
    many activities the course lists) as the download ``<courseId>-enrollments.csv``, with
    9.4's wire names as its header."""
    return csv_response(
        ROSTER_CSV_ROW.names,
        cells(ROSTER_CSV_ROW, roster_lines(enrollments, listed, chunk=CHUNK_ROWS)),
        filename=f"{course_id}-enrollments.csv",
    )
