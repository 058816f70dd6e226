"""No secret reaches PostgreSQL's log (PostgreSQL, real threads): creates racing for one name
wait for each other on the organization, so none is refused by the unique index, and a
statement the database refuses is logged with ``$1``, ``$2`` where its values were (the
connection binds them on the server), the rotation's ``UPDATE`` of the signing secret too.

The test reads the server's own log: ``pg_current_logfile()`` where the server collects its
log, else Debian's file for the cluster (``/var/log/postgresql/postgresql-15-main.log`` for
``cluster_name`` 15/main). Only the entries of the test's database count (the log line
prefix names it), so other databases' entries cannot make it fail."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import pytest
from django.db import DatabaseError, connection

from automations.services import create_automation, definition_or_error, rotate_secret
from tests.automations.factories import AutomationFactory
from tests.automations.test_name_concurrency import assert_one_won
from tests.helpers import at_once

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
URL = "/api/automations"


def _log_file() -> Path:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_logfile(), current_setting('cluster_name')")
        current, cluster = cursor.fetchone()
    if current:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('data_directory')")
            (data,) = cursor.fetchone()
        found = Path(data) / current
    else:
        found = Path(f"/var/log/postgresql/postgresql-{cluster.replace('/', '-')}.log")
    if not os.access(found, os.R_OK):
        reason = f"PostgreSQL's log ({found}) cannot be read here"
        if os.environ.get("LMS_REQUIRE_PG_LOG", "").lower() == "true":
            pytest.fail(f"{reason} and LMS_REQUIRE_PG_LOG=true")
        pytest.skip(f"{reason}; LMS_REQUIRE_PG_LOG=true to fail instead")
    return found


class DatabaseLog:
    """The server log's entries of this test's database written since it was made."""

    def __init__(self) -> None:
        self.path = _log_file()
        self.start = self.path.stat().st_size

    def entries(self) -> str:
        with self.path.open("rb") as log:
            log.seek(self.start)
            text = log.read().decode("utf-8", "replace")
        # An entry starts with a time stamp; continuation lines (a statement's later lines)
        # belong to the entry above them.
        entries = re.split(r"\n(?=\d{4}-\d\d-\d\d )", text)
        marker = f"@{connection.settings_dict['NAME']} "
        return "\n".join(entry for entry in entries if marker in entry.split("\n", 1)[0])


def body(name: str, credential: str) -> dict:
    hook = {
        "type": "webhook",
        "input": {"url": "https://hooks.example.com/x", "headers": {"Authorization": credential}},
    }
    return {"name": name, "trigger": "enrollment.created", "actions": [hook], "enabled": False}


def test_disabled_creates_racing_for_one_name_leave_no_credential_in_the_log(owner):
    log = DatabaseLog()
    credential = f"Bearer racing-{uuid.uuid4().hex}"
    for round_ in range(4):
        name = f"Hook {round_}"
        responses = at_once(
            [lambda api, n=name: api.post(URL, body(n, credential), token=owner.token)] * 6
        )
        assert_one_won(responses, 201)
    written = log.entries()
    assert credential not in written and "whsec_" not in written, written[:2000]


def test_a_refused_insert_and_a_refused_rotation_are_logged_without_their_values(owner):
    automation = AutomationFactory(org=owner.org)
    old_secret = automation.signing_secret
    log = DatabaseLog()
    credential = f"Bearer refused-{uuid.uuid4().hex}"
    definition = definition_or_error(org_id=owner.org.id, **_definition(credential))
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION refuse_for_test() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'refused for the test'; END $$"
        )
        cursor.execute(
            "CREATE TRIGGER refuse_for_test BEFORE INSERT OR UPDATE ON automations_automation "
            "FOR EACH ROW EXECUTE FUNCTION refuse_for_test()"
        )
    try:
        with pytest.raises(DatabaseError, match="refused for the test"):
            create_automation(
                org=owner.org, name="Refused", definition=definition, description="", enabled=False
            )
        with pytest.raises(DatabaseError, match="refused for the test"):
            rotate_secret(org=owner.org, automation_id=automation.id)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER refuse_for_test ON automations_automation")
            cursor.execute("DROP FUNCTION refuse_for_test()")
    written = log.entries()
    # Both statements were refused and logged, with their values' places only.
    assert re.search(r"STATEMENT:\s+INSERT INTO \"automations_automation\"", written), written
    assert re.search(r"STATEMENT:\s+UPDATE \"automations_automation\"", written), written
    assert "$1" in written
    assert credential not in written and "whsec_" not in written and old_secret not in written


def _definition(credential: str) -> dict:
    fields = body("", credential)
    return {"trigger": fields["trigger"], "actions": fields["actions"]}
