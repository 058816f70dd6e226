"""A list's rows as a CSV download (RFC 4180), streamed, for a view that answers JSON by
default and CSV to ``Accept: text/csv``.

- ``CsvRenderer``: offered after the JSON renderer (``CSV_RENDERERS``), so JSON stays the
  default and CSV is chosen only when the client's Accept header names ``text/csv`` and no
  JSON (DRF's negotiation does not weigh ``q``: where both are named, JSON); a view that
  offers it takes ``CsvErrorsAsJson`` too, so that an error is the contract's JSON body
  whatever was negotiated.
- ``csv_response(header, rows, filename=...)``: a ``StreamingHttpResponse`` whose body is
  written while ``rows`` are read (one encoded chunk per ``CHUNK_ROWS`` rows), so a
  hundred thousand rows take the memory of a chunk, never of the whole file.
- ``cells(shape, rows)``: the rows of a ``lms.web.shapes.Shape`` as CSV cells in its
  serializer's order: the same values the JSON body answers, so the header is the shape's
  wire names (``shape.names``).

A cell is what JSON answers, written as text: a timestamp as its wire text, an empty cell for
null, ``true``/``false`` for a boolean, a number as JSON writes it, an object or a list as its
compact JSON text. A text cell that begins
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is written with a leading ``'``,
so a spreadsheet shows it as text and never runs it as a formula (CWE-1236). The file begins
with a UTF-8 byte-order mark, by which spreadsheets recognise UTF-8 (Excel reads a file
without it as the system's code page and garbles every accented name); lines end with CRLF
and a cell holding a comma, a quote or a line break is quoted, its quotes doubled.
"""

from __future__ import annotations

import contextvars
import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import orjson
from django.http import StreamingHttpResponse
from rest_framework.renderers import BaseRenderer

from lms.web.renderers import OrjsonRenderer
from lms.web.shapes import Shape

MEDIA_TYPE = "text/csv"
CONTENT_TYPE = f"{MEDIA_TYPE}; charset=utf-8"
BOM = "\ufeff"
# Rows written into one chunk of the body: big enough that writing and sending a chunk
# costs little per row, small enough that a chunk is a few hundred kilobytes.
CHUNK_ROWS = 2000
# What a spreadsheet reads as the start of a formula (OWASP, "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class CsvRenderer(BaseRenderer):
    """Offers ``text/csv`` in content negotiation. The body is streamed by
    ``csv_response``, never rendered from data: a view answers it when this renderer was
    negotiated (``wants_csv``)."""

    media_type = MEDIA_TYPE
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        raise TypeError("A CSV body is streamed by lms.web.csv_export.csv_response.")


# JSON first: what a client that does not ask for CSV gets (no Accept, */*, or anything else).
CSV_RENDERERS = [OrjsonRenderer, CsvRenderer]


class CsvErrorsAsJson:
    """A view mixin: its GET offers CSV beside JSON (``CSV_RENDERERS``; its other methods
    JSON alone), and an error is answered as JSON (the contract's error body) even when the
    client asked for CSV."""

    renderer_classes = CSV_RENDERERS  # also what the schema and ``Vary: Accept`` read

    def get_renderers(self):
        renderers = CSV_RENDERERS if self.request.method in ("GET", "HEAD") else CSV_RENDERERS[:1]
        return [renderer() for renderer in renderers]

    def handle_exception(self, exc):
        request = getattr(self, "request", None)
        if request is not None and isinstance(
            getattr(request, "accepted_renderer", None), CsvRenderer
        ):
            request.accepted_renderer = OrjsonRenderer()
            request.accepted_media_type = OrjsonRenderer.media_type
        return super().handle_exception(exc)


def wants_csv(request) -> bool:
    """Whether content negotiation chose CSV for ``request``."""
    return isinstance(getattr(request, "accepted_renderer", None), CsvRenderer)


def cell(value: Any) -> str:
    """One value of a JSON body as CSV text (see the module's docstring)."""
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    if isinstance(value, float):
        return repr(value)  # as JSON writes it: 0.5, 1.0
    if isinstance(value, dict | list):
        return orjson.dumps(value).decode()  # a JSON document as its compact text
    return str(value)


def cells(shape: Shape, rows: Iterable[Any]) -> Iterator[list[str]]:
    """Each row (read through ``shape.columns``, or whose attributes are a plain
    serializer's sources, ids and times as wire text) as the cells of its JSON body, in
    the order of ``shape.names``."""
    body = shape.body
    for row in rows:
        yield [cell(value) for value in body(row).values()]


def csv_chunks(header: Sequence[str], rows: Iterable[Sequence[str]]) -> Iterator[bytes]:
    """The file, in chunks of UTF-8: the byte-order mark and the header row, then
    ``CHUNK_ROWS`` rows a chunk (cells as ``cell`` writes them)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    buffer.write(BOM)
    writer.writerow(header)
    written = 0
    for row in rows:
        writer.writerow(row)
        written += 1
        if written == CHUNK_ROWS:
            yield buffer.getvalue().encode("utf-8")
            buffer.seek(0)
            buffer.truncate()
            written = 0
    yield buffer.getvalue().encode("utf-8")


def _in_this_context(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """``chunks``, each made in the context variables of the request as they are now: the
    body is written after the view has returned and the middleware has reset the request's
    state (its id in the logs, which database its reads go to: ``lms.db.replica``), and the
    rows read meanwhile must be read as the request's own reads."""
    context = contextvars.copy_context()  # now, not at the first chunk

    def made() -> Iterator[bytes]:
        while (chunk := context.run(next, chunks, None)) is not None:
            yield chunk

    return made()


def csv_response(
    header: Sequence[str], rows: Iterable[Sequence[str]], *, filename: str
) -> StreamingHttpResponse:
    """A ``200`` streaming ``rows`` (lists of cells) under ``header`` as a CSV download
    named ``filename`` (plain ASCII: an id and a suffix). The rows are read as the body is
    sent, after the view has returned, in the request's context (``_in_this_context``)."""
    response = StreamingHttpResponse(
        _in_this_context(csv_chunks(header, rows)), content_type=CONTENT_TYPE
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
