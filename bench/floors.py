"""The floors of the load bench, served by bench/bare_settings.py: bare Django (no app, no
middleware, no authentication, no ORM) under the same gunicorn settings as the service.

- ``ceiling``: a constant JSON body the size of a page of 20 bundles, what the stack costs
  with nothing to do;
- ``floor``: the same after two primary-key reads, the token's row then an automation's, on
  a raw psycopg connection and cursor the thread keeps, each a prepared statement, every
  value read as the database's text: what any authenticated read must cost at the least;
- ``write``: the write floor, one primary-key read (the token's row) and one INSERT of the
  request's JSON body as a ``jsonb`` row, committed (autocommit: one statement, its own
  transaction), answering the same constant body: what any write must cost at the least.

The written rows go to ``bench_floor_write``, a table of the bench's own that the first
connection creates in the bench's database; the service's schema knows nothing of it.
"""

from __future__ import annotations

import json
import threading

import psycopg
from django.conf import settings
from django.http import HttpResponse
from psycopg.types.string import TextLoader

_ROW = {
    "orgId": "0193b3d6-a4c8-7f1e-9d2b-3c4d5e6f7a8b",
    "id": "0193b3d6-a4c8-7f1e-9d2b-3c4d5e6f7a8c",
    "name": "Python for data analysis, a bundle of twenty",
    "createdAt": "2026-11-22T03:28:00.123456Z",
    "updatedAt": "2026-11-22T03:28:00.123456Z",
}
BODY = json.dumps(
    {"items": [_ROW] * 20, "page": 1, "pageSize": 20, "total": 20, "totalPages": 1}
).encode()

TOKEN = "SELECT * FROM organizations_apitoken WHERE id = %s"
ROW = "SELECT * FROM automations_automation WHERE id = %s"
INSERT = "INSERT INTO bench_floor_write (body) VALUES (%s)"
WRITE_TABLE = (
    "CREATE TABLE IF NOT EXISTS bench_floor_write "
    "(id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body jsonb NOT NULL)"
)
# Read as text, as the service's wire reads select ids and times (lms.db.wire): no Python
# object is built for a value.
TEXT_TYPES = ("uuid", "timestamptz", "json", "jsonb")

_local = threading.local()


def _connect() -> tuple[psycopg.Cursor, str, str]:
    db = settings.DATABASES["default"]
    conn = psycopg.connect(
        dbname=db["NAME"],
        user=db["USER"],
        password=db["PASSWORD"] or None,
        host=db["HOST"],
        port=db["PORT"] or None,
        autocommit=True,
    )
    for name in TEXT_TYPES:
        conn.adapters.register_loader(name, TextLoader)
    with conn.transaction():  # one creator at a time among the workers
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('bench_floor_write'))")
        conn.execute(WRITE_TABLE)
    token_id = conn.execute("SELECT id FROM organizations_apitoken LIMIT 1").fetchone()[0]
    row_id = conn.execute("SELECT id FROM automations_automation LIMIT 1").fetchone()[0]
    return conn.cursor(), token_id, row_id


def _kept() -> tuple[psycopg.Cursor, str, str]:
    kept = getattr(_local, "kept", None)
    if kept is None or kept[0].connection.closed:
        kept = _local.kept = _connect()
    return kept


def ceiling(request):
    return HttpResponse(BODY, content_type="application/json")


def floor(request):
    cursor, token_id, row_id = _kept()
    cursor.execute(TOKEN, [token_id], prepare=True).fetchone()
    cursor.execute(ROW, [row_id], prepare=True).fetchone()
    return HttpResponse(BODY, content_type="application/json")


def write(request):
    cursor, token_id, _ = _kept()
    cursor.execute(TOKEN, [token_id], prepare=True).fetchone()
    cursor.execute(INSERT, [request.body.decode()], prepare=True)
    return HttpResponse(BODY, status=201, content_type="application/json")


def readyz(request):
    """Ready once the thread's connection is made (and the write floor's table exists)."""
    _kept()
    return HttpResponse(b'{"status":"ok"}', content_type="application/json")
