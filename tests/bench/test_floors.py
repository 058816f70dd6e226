"""The floors (bench/floors.py) over real HTTP, served as the load bench serves them: bare
Django (bench/bare_settings.py) under gunicorn.conf.py, on PostgreSQL with the demo's rows.
Each answers the constant body, with nothing of the service around it (no middleware: no
request id); the write floor commits the JSON body it was sent as a row of its own table."""

from __future__ import annotations

import http.client
import io
import json

import pytest
from django.core.management import call_command
from django.db import connection

from bench.floors import BODY
from bench.load import FLOOR_WRITE_BODY, FLOORS
from harness.processes import HOST, gunicorn_server
from harness.servers import base_env

pytestmark = [pytest.mark.postgres, pytest.mark.processes]


def ask(port: int, method: str, path: str, body: dict | None = None) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection(HOST, port, timeout=15)
    try:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data else {}
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


@pytest.mark.django_db(transaction=True)
def test_each_floor_answers_the_constant_body_and_the_write_floor_commits_its_row(tmp_path):
    call_command("seed_demo", "--json", stdout=io.StringIO(), stderr=io.StringIO())
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    url = f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    env = base_env(
        DATABASE_URL=url, DJANGO_SETTINGS_MODULE="bench.bare_settings", LMS_VAR_DIR=str(tmp_path)
    )
    try:
        with gunicorn_server(env, log_path=tmp_path / "bare.log", workers=1) as server:
            answers = {}
            for target in FLOORS:
                ((method, path, _, body),) = target.plans[0]
                for _ in range(7):  # past psycopg's threshold, the statements are prepared
                    answers[target.key] = ask(server.port, method, path, body)
        with connection.cursor() as cursor:
            cursor.execute("SELECT body FROM bench_floor_write")
            written = [json.loads(row[0]) if isinstance(row[0], str) else row[0] for row in cursor]
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS bench_floor_write")
    assert {key: (status, body) for key, (status, _, body) in answers.items()} == {
        "ceiling": (200, BODY),
        "floor": (200, BODY),
        "write": (201, BODY),
    }
    assert all("x-request-id" not in headers for _, headers, _ in answers.values())
    assert written == [FLOOR_WRITE_BODY] * 7
