"""lms.db.statements: written-out INSERT, UPDATE and DELETE of tenant rows, read back through
the ORM on both databases, and never reaching another organization's row (or, for
``shift_down``, another group's)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, models
from django.test.utils import CaptureQueriesContext, isolate_apps

from downloads.models import DownloadAsset
from learn.models import Activity, Course
from lms.db import statements
from lms.ids import uuid7
from tests.downloads.factories import AssetFactory, DownloadFactory
from tests.helpers import prepared_statements
from tests.learn.factories import ActivityFactory, CourseFactory

pytestmark = pytest.mark.django_db

WHEN = datetime(2026, 3, 4, 5, 6, 7, 890123, tzinfo=UTC)


def test_insert_writes_every_row_as_the_orm_reads_it(org):
    ids = [uuid7(), uuid7()]
    statements.Insert(Course, ("id", "org", "created_at", "updated_at", "title", "published"))(
        [
            (ids[0], org.id, WHEN, WHEN, "It's 100% \\ done", True),
            (ids[1], org.id, WHEN, WHEN, "", False),
        ],
    )
    rows = {course.id: course for course in Course.objects.for_org(org)}
    assert set(rows) == set(ids)
    first = rows[ids[0]]
    assert (first.title, first.published, first.created_at, first.updated_at) == (
        "It's 100% \\ done",
        True,
        WHEN,
        WHEN,
    )
    assert (rows[ids[1]].title, rows[ids[1]].published) == ("", False)


def test_insert_of_no_rows_sends_nothing(org, django_assert_num_queries):
    with django_assert_num_queries(0):
        statements.Insert(Course, ("id", "org", "title"))([])


def test_update_converts_json_and_times_and_answers_the_count(org):
    activity = ActivityFactory(module__course__org=org, settings={"a": 1})
    settings = {"completion": {"type": "view"}, "nested": [1.5, None, "x"]}
    changed = statements.update(
        Activity, org_id=org.id, pk=activity.id, settings=settings, updated_at=WHEN
    )
    activity.refresh_from_db()
    assert (changed, activity.settings, activity.updated_at) == (1, settings, WHEN)


def test_update_and_delete_never_reach_another_organizations_row(org, other_org):
    foreign = CourseFactory(org=other_org, title="theirs")
    assert statements.update(Course, org_id=org.id, pk=foreign.id, title="mine") == 0
    assert statements.delete(Course, org_id=org.id, pk=foreign.id) == 0
    foreign.refresh_from_db()
    assert foreign.title == "theirs"


def test_delete_removes_the_one_row(org):
    kept, gone = CourseFactory(org=org), CourseFactory(org=org)
    assert statements.delete(Course, org_id=org.id, pk=gone.id) == 1
    assert list(Course.objects.for_org(org).values_list("id", flat=True)) == [kept.id]


# --- shift_down: an ordered group's rows after a gap, one position down ---------------------


def _positions(download, seqs) -> list[DownloadAsset]:
    """Links of ``download`` at ``seqs``, each to an asset of its own, stamped ``WHEN``."""
    rows = [
        DownloadAsset.all_orgs.create(
            org_id=download.org_id,
            download=download,
            asset=AssetFactory(org_id=download.org_id),
            seq=seq,
            display_name=f"at {seq}",
        )
        for seq in seqs
    ]
    DownloadAsset.all_orgs.filter(download=download).update(updated_at=WHEN)
    return rows


def _stored(download) -> list[tuple]:
    return list(
        DownloadAsset.all_orgs.filter(download=download)
        .order_by("seq")
        .values_list("display_name", "seq", "updated_at")
    )


def _shift(download, *, org_id=None, first, top, now):
    return statements.shift_down(
        DownloadAsset,
        org_id=org_id or download.org_id,
        within={"download": download.id},
        position="seq",
        first=first,
        top=top,
        updated_at=now,
    )


def test_shift_down_closes_a_gap_past_the_unique_positions_and_stamps_the_moved_rows(org):
    """Positions are unique per download and checked row by row: the rows after the gap
    move down one without ever meeting a taken position, whatever their number."""
    download = DownloadFactory(org=org)
    _positions(download, [1, 2, *range(4, 14)])
    later = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)

    assert _shift(download, first=4, top=13, now=later) == 10

    assert _stored(download) == [
        ("at 1", 1, WHEN),
        ("at 2", 2, WHEN),
        *((f"at {seq}", seq - 1, later) for seq in range(4, 14)),
    ]


def test_shift_down_never_reaches_another_group_or_organization(org, other_org):
    download, sibling = DownloadFactory(org=org), DownloadFactory(org=org)
    _positions(download, [1, 3])
    _positions(sibling, [1, 3])
    later = datetime(2026, 5, 6, tzinfo=UTC)

    assert _shift(download, org_id=other_org.id, first=3, top=3, now=later) == 0
    assert _shift(download, first=3, top=3, now=later) == 1

    assert _stored(download) == [("at 1", 1, WHEN), ("at 3", 2, later)]
    assert _stored(sibling) == [("at 1", 1, WHEN), ("at 3", 3, WHEN)]


@pytest.mark.postgres
def test_shift_down_is_prepared_once_per_connection(org):
    downloads = DownloadFactory.create_batch(3, org=org)
    for download in downloads:
        _positions(download, [1, 3])
    for download in downloads:
        assert _shift(download, first=3, top=3, now=WHEN) == 1
    ran = prepared_statements("UPDATE%seq%")
    assert len(ran) == 2 and {runs for _, runs in ran} == {3}
    assert all(str(download.id) not in statement for statement, _ in ran)


@pytest.mark.postgres
def test_a_statement_is_prepared_once_per_connection_and_logged_with_its_values(org):
    """On PostgreSQL each statement is prepared on the connection and run from it after;
    the query log shows it as the client-bound statement would be, values written in."""
    course = CourseFactory(org=org)
    with CaptureQueriesContext(connection) as queries:
        for title in ("one", "two", "three"):
            assert statements.update(Course, org_id=org.id, pk=course.id, title=title) == 1
    ((statement, runs),) = prepared_statements("UPDATE%")
    assert runs == 3 and "$1" in statement and course.id.hex not in statement
    assert len(queries) == 3 and "'three'" in queries[2]["sql"]
    course.refresh_from_db()
    assert course.title == "three"


# --- insert writes every column: a field added with a default needs no change ------------


def _extra_model(**more):
    """A model in a registry of its own (never migrated: a test makes its table) with the
    columns the tests give and others, each filled another way."""
    attrs = {
        "__module__": __name__,
        "Meta": type("Meta", (), {"app_label": "downloads", "db_table": "statements_x"}),
        "id": models.UUIDField(primary_key=True),
        "name": models.CharField(max_length=20),
        "pinned": models.BooleanField(default=False),
        "source": models.CharField(default="api", max_length=20),
        "token": models.UUIDField(default=uuid.uuid4),
        "rank": models.IntegerField(db_default=7),
        "note": models.TextField(null=True),
        "stamped": models.DateTimeField(auto_now_add=True),
        **more,
    }
    return type("Extra", (models.Model,), attrs)


@pytest.mark.django_db(transaction=True)
def test_insert_fills_every_column_not_given_as_the_model_would():
    with isolate_apps("downloads"):
        Extra = _extra_model()
        with connection.schema_editor() as editor:
            editor.create_model(Extra)
        try:
            ids = [uuid7(), uuid7()]
            statements.Insert(Extra, ("id", "name"))([(ids[0], "a"), (ids[1], "b")])
            rows = {row.id: row for row in Extra.objects.all()}
        finally:
            with connection.schema_editor() as editor:
                editor.delete_model(Extra)
    assert set(rows) == set(ids)
    a, b = rows[ids[0]], rows[ids[1]]
    assert (a.pinned, a.source, a.rank, a.note) == (False, "api", 7, None)
    assert a.token != b.token  # a callable default, called per row
    assert a.stamped is not None


def test_a_column_nothing_fills_fails_naming_the_model_the_field_and_the_fix():
    with isolate_apps("downloads"):
        Extra = _extra_model(required=models.IntegerField())
        with pytest.raises(ImproperlyConfigured) as caught:
            statements.Insert(Extra, ("id", "name"))
    message = str(caught.value)
    assert "downloads.Extra.required" in message and "default" in message


@pytest.mark.django_db
def test_a_batch_insert_writes_every_row_once_however_many(org, monkeypatch):
    """A batch is one statement (PostgreSQL: one JSON parameter), or on SQLite as few as its
    parameter limit allows (here made 20: two rows a statement); a row that breaks a unique
    constraint is left out, and the values read back as the ORM wrote them."""
    from automations.models import AutomationRun
    from tests.automations.factories import AutomationFactory

    monkeypatch.setattr(statements, "_variable_limit", lambda connection: 20)
    automation = AutomationFactory(org=org)
    insert = statements.Insert(
        AutomationRun,
        ("id", "org_id", "automation_id", "revision_id", "trigger", "event_id", "occurred_at",
         "event_data", "depth", "due_at"),
        ignore_conflicts=True,
        batch=True,
    )  # fmt: skip
    when = datetime(2026, 11, 21, 9, 30, 0, 123456, tzinfo=UTC)
    events = sorted(uuid7() for _ in range(5))  # the last one new in the second batch

    def row(event, data):
        return (uuid7(), org.id, automation.id, automation.revision_id, "enrollment.created",
                event, when, data, 1, when)  # fmt: skip

    text = 'it\'s "quoted" \\ ü'
    insert([row(event, {"n": n, "text": text}) for n, event in enumerate(events[:-1])])
    with CaptureQueriesContext(connection) as captured:
        insert([row(event, {"again": True}) for event in events[:3]] + [row(events[-1], {})])
    runs = AutomationRun.objects.for_org(org).order_by("event_id")
    assert [run.event_id for run in runs] == events
    assert runs[0].event_data == {"n": 0, "text": text}
    assert runs[0].occurred_at == when and runs[0].depth == 1 and runs[0].status == "pending"
    assert runs[4].event_data == {}
    if connection.vendor == "postgresql":
        assert len(captured) == 1
    else:
        per = max(1, 20 // len(insert.fields))
        assert len(captured) == -(-4 // per)  # 4 rows, ``per`` a statement
