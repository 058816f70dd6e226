"""The two floors of the load bench, served by bench/bare_settings.py (no middleware, no
authentication, no ORM):

- ``ceiling``: a bare Django view answering a constant JSON body the size of a page of 20
  bundles, what the stack costs with nothing to do;
- ``database``: the same after two primary-key reads with raw psycopg on a connection the
  thread keeps, what reading a token and a row costs at the least.
"""

from __future__ import annotations

import json
import threading

import psycopg
from django.conf import settings
from django.http import HttpResponse

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

_local = threading.local()


def _connection() -> tuple[psycopg.Connection, list]:
    conn = getattr(_local, "conn", None)
    if conn is None or conn.closed:
        db = settings.DATABASES["default"]
        conn = psycopg.connect(
            dbname=db["NAME"],
            user=db["USER"],
            password=db["PASSWORD"] or None,
            host=db["HOST"],
            port=db["PORT"] or None,
            autocommit=True,
        )
        # One token and one automation to read by primary key, as an authenticated read.
        ids = [
            conn.execute("SELECT id FROM organizations_apitoken LIMIT 1").fetchone()[0],
            conn.execute("SELECT id FROM automations_automation LIMIT 1").fetchone()[0],
        ]
        _local.conn, _local.ids = conn, ids
    return conn, _local.ids


def ceiling(request):
    return HttpResponse(BODY, content_type="application/json")


def database(request):
    conn, (token_id, automation_id) = _connection()
    conn.execute("SELECT * FROM organizations_apitoken WHERE id = %s", [token_id]).fetchone()
    conn.execute("SELECT * FROM automations_automation WHERE id = %s", [automation_id]).fetchone()
    return HttpResponse(BODY, content_type="application/json")
