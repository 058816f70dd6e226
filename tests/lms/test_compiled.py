"""lms.db.compiled: SQL compiled once per shape, rebound with each call's values, and the same
rows as the ORM on both databases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.models import Value
from django.db.models.functions import Lower
from django.test.utils import CaptureQueriesContext

from bundles.models import Bundle
from learn.models import Activity
from lms.db.compiled import Compiled, NotCompilable, PrepareWhenSmall, kept_cursor
from lms.errors import NotFound
from lms.tenancy import UnscopedQuery
from tests.bundles.factories import add_bundles
from tests.helpers import prepared_statements
from tests.learn.factories import ActivityFactory

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ("org_id", "id", "name", "created_at", "updated_at")


def by_name(org_id, term):
    return (
        Bundle.objects.for_org(org_id)
        .filter(name__contains=term)
        .order_by("name", "id")
        .values_list(*COLUMNS)
    )


NAMES = ["100% cotton", "100 percent", "snake_case", "snakecase", "back\\slash", "O'Brien", "b"]


@pytest.fixture
def bundles(org, other_org):
    add_bundles(org, NAMES)
    add_bundles(other_org, NAMES)


@pytest.mark.parametrize("term", ["%", "_", "\\", "'", "100%", "snake_", "e", "", "zzz"])
def test_rows_are_the_orms_for_every_value(bundles, org, other_org, term):
    """The LIKE pattern is rebuilt with the new value escaped as the ORM escapes it: ``%``,
    ``_`` and ``\\`` match only themselves; the organization is rebound too."""
    read = Compiled(by_name)
    for org_id in (org.id, other_org.id):
        assert read.rows(org_id=org_id, term="warm-up") == []
        assert read.rows(org_id=org_id, term=term) == list(by_name(org_id, term))
    assert len(read._plans) == 1


def test_one_query_per_call_and_one_compilation_per_shape(bundles, org):
    read = Compiled(lambda shape, org_id: by_name(org_id, "")[:shape])
    read.rows(2, org_id=org.id)
    plan = read._plans.get(2)
    with CaptureQueriesContext(connection) as queries:
        rows = read.rows(2, org_id=org.id)
    assert len(queries) == 1 and queries[0]["sql"] is not None
    assert rows == list(by_name(org.id, "")[:2])
    assert read._plans.get(2) is plan  # not compiled again
    assert read.rows(3, org_id=org.id) == list(by_name(org.id, "")[:3])
    assert len(read._plans) == 2 and read._plans.get(3) is not None


def test_values_read_back_as_the_orm_converts_them(bundles, org):
    """UUIDs and timestamps come back as Python values on SQLite too (converters)."""
    (row,) = Compiled(by_name).rows(org_id=org.id, term="O'B")
    assert isinstance(row[0], uuid.UUID) and isinstance(row[1], uuid.UUID)
    assert row[3].tzinfo is not None
    assert row == next(iter(by_name(org.id, "O'B")))


def test_records_are_model_instances_with_annotations(org):
    activity = ActivityFactory(org=org, settings={"completion": {"type": "view"}})
    read = Compiled(
        lambda org_id, id: (
            Activity.objects.for_org(org_id)
            .filter(id=id)
            .annotate(flag=Value(7))
            .values_list("settings", "id", "flag")
        )
    )
    (record,) = read.records(Activity, org_id=org.id, id=activity.id)
    assert isinstance(record, Activity)
    assert (record.id, record.settings, record.flag) == (activity.id, activity.settings, 7)
    assert read.records(Activity, org_id=org.id, id=uuid.uuid4()) == []


def test_a_value_written_into_the_sql_is_refused(org):
    """A function that puts a value into the SQL text (here a LIMIT) cannot be reused."""
    read = Compiled(lambda org_id, size: Bundle.objects.for_org(org_id).values_list("id")[:size])
    with pytest.raises(NotCompilable, match="shape"):
        read.rows(org_id=org.id, size=3)


def test_a_value_of_an_unknown_type_is_refused(org):
    read = Compiled(lambda org_id, ids: Bundle.objects.for_org(org_id).filter(id__in=ids))
    with pytest.raises(NotCompilable, match="list"):
        read.rows(org_id=org.id, ids=[uuid.uuid4()])


def test_a_transformed_value_is_refused_unless_rebinding_gives_the_orms_sql(bundles, org):
    """``Lower`` of a value is bound as the value itself; the check with awkward stand-ins
    passes, and the rows are the ORM's."""
    read = Compiled(
        lambda org_id, term: (
            Bundle.objects.for_org(org_id)
            .filter(name_lower__contains=Lower(Value(term)))
            .order_by("id")
            .values_list("name")
        )
    )
    assert read.rows(org_id=org.id, term="SNAKE_") == [("snake_case",)]


def test_tenancy_fails_closed_when_compiled(org):
    read = Compiled(lambda id: Bundle.objects.filter(id=id).values_list("name"))
    with pytest.raises(UnscopedQuery):
        read.rows(id=uuid.uuid4())


def test_one_or_404_parses_ids_and_answers_the_models_not_found(bundles, org, other_org):
    read = Compiled(
        lambda org_id, id: Bundle.objects.for_org(org_id).filter(id=id).values_list("name")
    )
    bundle = Bundle.objects.for_org(org).get(name="b")
    assert read.one_or_404(Bundle, org_id=org.id, id=str(bundle.id).upper()) == ("b",)
    for org_id, id_ in [(org.id, "not-an-id"), (org.id, None), (other_org.id, bundle.id)]:
        with pytest.raises(NotFound, match=r"^No bundle with that id\.$"):
            read.one_or_404(Bundle, org_id=org_id, id=id_)


def _by_id(org_id, id):
    return Bundle.objects.for_org(org_id).filter(id=id).values_list(*COLUMNS)


def test_a_prepared_read_answers_as_the_orm_on_either_database(bundles, org, other_org):
    read = Compiled(_by_id, prepare=True)
    for bundle in Bundle.objects.for_org(org):
        assert read.rows(org_id=org.id, id=bundle.id) == list(_by_id(org.id, bundle.id))
        assert read.rows(org_id=other_org.id, id=bundle.id) == []
    (record,) = read.records(Bundle, org_id=org.id, id=bundle.id)
    assert (record.id, record.name) == (bundle.id, bundle.name)


@pytest.mark.postgres
def test_a_prepared_read_is_one_prepared_statement_per_connection(bundles, org):
    """The read is prepared on the connection and run from it every time after (its plan
    counts grow with the calls); a read without ``prepare`` leaves nothing prepared."""
    bundle = Bundle.objects.for_org(org).get(name="b")
    Compiled(_by_id).rows(org_id=org.id, id=bundle.id)
    assert prepared_statements() == []
    read = Compiled(_by_id, prepare=True)
    for _ in range(7):
        assert read.rows(org_id=org.id, id=bundle.id) == list(_by_id(org.id, bundle.id))
    ((statement, runs),) = prepared_statements()
    assert runs == 7
    assert statement.startswith("SELECT") and '"bundles_bundle"' in statement
    assert "$1" in statement and str(bundle.id) not in statement  # bound on the server


@pytest.mark.postgres
def test_a_prepared_read_is_counted_and_logged_with_its_values(bundles, org):
    """Counted as any query, and logged as the same read bound on the client is: with its
    values written in."""
    bundle = Bundle.objects.for_org(org).get(name="b")
    with CaptureQueriesContext(connection) as plain:
        Compiled(_by_id).rows(org_id=org.id, id=bundle.id)
    read = Compiled(_by_id, prepare=True)
    with CaptureQueriesContext(connection) as queries:
        read.rows(org_id=org.id, id=bundle.id)
        read.rows(org_id=org.id, id=bundle.id)
    assert len(queries) == 2
    assert [query["sql"] for query in queries] == [plain[0]["sql"]] * 2
    assert bundle.id.hex in plain[0]["sql"] and org.id.hex in plain[0]["sql"]


@pytest.mark.postgres
def test_nothing_is_prepared_where_the_connection_turns_prepared_statements_off(bundles, org):
    """``LMS_DB_PREPARE=false`` leaves the connection's ``prepare_threshold`` unset (as
    Django's default is): the read answers the same through the usual cursor."""
    bundle = Bundle.objects.for_org(org).get(name="b")
    connection.ensure_connection()
    raw = connection.connection
    threshold, raw.prepare_threshold = raw.prepare_threshold, None
    try:
        rows = Compiled(_by_id, prepare=True).rows(org_id=org.id, id=bundle.id)
    finally:
        raw.prepare_threshold = threshold
    assert rows == list(_by_id(org.id, bundle.id))
    assert prepared_statements() == []


def test_prepare_when_small_prepares_only_for_values_last_told_small():
    """Not told yet: not prepared; told at most the limit: prepared; told larger since: not
    prepared again; at most ``remember`` values kept, the oldest forgotten first."""
    policy = PrepareWhenSmall(key="org_id", limit=10, remember=4)
    small, large, grown = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    assert not policy.prepares({"org_id": small, "search": "x"})
    policy.note(small, 10)
    policy.note(large, 11)
    policy.note(grown, 3)
    policy.note(grown, 12)
    assert [policy.prepares({"org_id": org_id}) for org_id in (small, large, grown)] == [
        True,
        False,
        False,
    ]
    for n in range(2):
        policy.note(uuid.uuid4(), n)
    assert not policy.prepares({"org_id": small})  # forgotten: planned for its values again
    policy.clear()
    assert not policy.small(grown)


def test_prepare_takes_a_policy_or_a_bool_only():
    with pytest.raises(TypeError, match="policy"):
        Compiled(_by_id, prepare="yes")


@pytest.mark.postgres
def test_one_compiled_read_is_prepared_for_the_values_its_policy_asks(bundles, org, other_org):
    """The policy is asked on every call: the same read, one compilation, is a prepared
    statement for the organization told small and planned per call for any other, with the
    ORM's rows either way."""
    policy = PrepareWhenSmall(key="org_id", limit=len(NAMES))
    read = Compiled(_by_id, prepare=policy)
    bundle = Bundle.objects.for_org(org).get(name="b")
    foreign = Bundle.objects.for_org(other_org).get(name="b")
    assert read.rows(org_id=org.id, id=bundle.id) == list(_by_id(org.id, bundle.id))
    assert prepared_statements() == []
    policy.note(org.id, len(NAMES))
    policy.note(other_org.id, len(NAMES) + 1)
    for _ in range(3):
        assert read.rows(org_id=org.id, id=bundle.id) == list(_by_id(org.id, bundle.id))
        assert read.rows(org_id=other_org.id, id=foreign.id) == list(
            _by_id(other_org.id, foreign.id)
        )
    ((statement, runs),) = prepared_statements()
    assert runs == 3 and "$1" in statement
    assert len(read._plans) == 1


@pytest.mark.parametrize("pool", ["false", "true"])
@pytest.mark.parametrize("prepare, threshold", [("", 5), ("true", 5), ("false", None)])
@pytest.mark.processes
def test_lms_db_prepare_sets_the_connections_threshold(tmp_path, pool, prepare, threshold):
    """The settings' PostgreSQL options, read in a process of their own (settings are read
    once): prepared statements on unless turned off, with or without the pool."""
    env = {
        **os.environ,
        "DATABASE_URL": "postgres://u@127.0.0.1:5432/x",
        "LMS_DB_PREPARE": prepare,
        "LMS_DB_POOL": pool,
        "LMS_VAR_DIR": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-c", "from lms import settings; import json; "
         "print(json.dumps(settings.DATABASES['default']['OPTIONS'], default=repr))"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    options = json.loads(done.stdout)
    assert options.get("prepare_threshold") == threshold
    # No statement carries its values; none is prepared unless it asks.
    assert options["server_side_binding"] is True
    assert options["cursor_factory"] == "<class 'lms.db.cursors.BindingCursor'>"
    assert ("pool" in options) == (pool == "true")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)  # the connection is closed and opened again
def test_a_connection_keeps_one_cursor_for_its_prepared_reads(bundles, org, other_org, settings):
    """``LMS_DB_KEEP_CURSOR``: every prepared read of a database connection runs on the one
    cursor it kept, with the ORM's rows, after a failed statement too; a new connection
    keeps a new one; a connection logging its queries, one with prepared statements off, or
    the switch off, makes a cursor per read."""
    read = Compiled(_by_id, prepare=True)
    bundle = Bundle.objects.for_org(org).get(name="b")
    expected = list(_by_id(org.id, bundle.id))
    assert read.rows(org_id=org.id, id=bundle.id) == expected
    kept = kept_cursor(connection)
    assert kept is not None and kept_cursor(connection) is kept
    assert read.rows(org_id=other_org.id, id=bundle.id) == []
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT 1 / 0")
    assert read.rows(org_id=org.id, id=bundle.id) == expected
    assert kept_cursor(connection) is kept
    connection.close()
    assert read.rows(org_id=org.id, id=bundle.id) == expected
    assert kept_cursor(connection) not in {None, kept}
    with CaptureQueriesContext(connection):
        assert kept_cursor(connection) is None
    raw = connection.connection
    threshold, raw.prepare_threshold = raw.prepare_threshold, None
    try:
        assert kept_cursor(connection) is None
    finally:
        raw.prepare_threshold = threshold
    settings.LMS_DB_KEEP_CURSOR = False
    assert kept_cursor(connection) is None
    assert read.rows(org_id=org.id, id=bundle.id) == expected


def test_no_cursor_is_kept_on_sqlite_or_with_the_switch_off(bundles, org, settings):
    if connection.vendor == "postgresql":
        settings.LMS_DB_KEEP_CURSOR = False
    assert kept_cursor(connection) is None
    bundle = Bundle.objects.for_org(org).get(name="b")
    assert Compiled(_by_id, prepare=True).rows(org_id=org.id, id=bundle.id) == list(
        _by_id(org.id, bundle.id)
    )
