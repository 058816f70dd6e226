"""``LMS_DB_RANDOM_PAGE_COST``: the planner's price of an out-of-order page read on the
service's PostgreSQL connections (lms.settings; docs/performance.md, "A course's roster and
report at 100,000 enrolments"), sent as a start-up option."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.db import connection

from harness.processes import ROOT
from harness.servers import base_env, run_django

SHOW = (
    "from django.db import connection\n"
    "with connection.cursor() as cursor:\n"
    "    cursor.execute('SHOW random_page_cost')\n"
    "    print(cursor.fetchone()[0])\n"
)


def _url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_service_connections_price_a_random_page_read_as_on_ssd():
    with connection.cursor() as cursor:
        cursor.execute("SHOW random_page_cost")
        assert cursor.fetchone()[0] == "1.1"


@pytest.mark.postgres
@pytest.mark.processes
@pytest.mark.django_db
@pytest.mark.parametrize(("value", "shown"), [("2.5", "2.5"), ("", "4")])
def test_the_price_is_a_switch_and_empty_keeps_the_servers(value, shown):
    """An empty value sends no option at all: the connection has the server's own price
    (PostgreSQL's default, 4, on the test server)."""
    env = base_env(DATABASE_URL=_url(), LMS_DB_RANDOM_PAGE_COST=value)
    assert run_django(SHOW, env).strip() == shown


@pytest.mark.processes
def test_a_price_that_is_no_number_stops_the_settings():
    env = base_env(LMS_DB_RANDOM_PAGE_COST="cheap", DATABASE_URL="postgres://u@127.0.0.1/lms")
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0
    assert "LMS_DB_RANDOM_PAGE_COST must be a number or empty, not 'cheap'." in done.stderr
