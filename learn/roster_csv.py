"""A course's roster as CSV (9.4's ``Accept: text/csv``), for the API's roster view and the
admin's report page alike: every row the filters and sort select, streamed
(``lms.web.csv_export``), read as wire text (``learn.wire_reads.roster_lines``).

The rows are read after the view has returned, while the body is sent, when the request's
routing state (``lms.db.replica``) is gone: so the database is chosen here, at the call,
as the router chooses it for the request's reads (the replica for an API read request that
may use it, with the same read-your-writes rules; the primary for the admin), and the read
is bound to it."""

from __future__ import annotations

import uuid

from django.db import router
from django.db.models import QuerySet
from django.http import StreamingHttpResponse

from learn.models import Enrollment
from learn.serializers import ROSTER_ROW
from learn.wire_reads import roster_lines
from lms.web.csv_export import CHUNK_ROWS, cells, csv_response


def roster_csv_response(
    enrollments: QuerySet[Enrollment], *, listed: int, course_id: uuid.UUID
) -> StreamingHttpResponse:
    """``enrollments`` (a ``learn.selectors.roster``, filtered and ordered; ``listed``: how
    many activities the course lists) as the download ``<courseId>-enrollments.csv``, with
    9.4's wire names as its header."""
    bound = enrollments.using(router.db_for_read(Enrollment))
    return csv_response(
        ROSTER_ROW.names,
        cells(ROSTER_ROW, roster_lines(bound, listed, chunk=CHUNK_ROWS)),
        filename=f"{course_id}-enrollments.csv",
    )
