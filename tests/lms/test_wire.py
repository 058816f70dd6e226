"""Ids and timestamps written by the database (``lms.db.wire``) read exactly as the Python they
replace writes them: ``str(uuid)`` and DRF's ``DateTimeField``, on this run's database."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from django.db import NotSupportedError, connection
from django.db.models import DateTimeField, F, Value
from django.db.models.functions import Cast
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from bundles.models import Bundle
from learn.models import Activity, Course, Module
from lms.db.wire import WireId, WireTime, wire_columns
from lms.serializers import wire_time
from tests.bundles.factories import add_bundles
from tests.learn.factories import CourseFactory, ModuleFactory

pytestmark = pytest.mark.django_db

DRF_TIME = serializers.DateTimeField()

# Any aware time Python can hold, in any offset, to the microsecond; whole seconds and
# whole fractions of a second often, since isoformat writes those differently.
times = st.builds(
    lambda moment, micro, offset: moment.replace(microsecond=micro).replace(
        tzinfo=timezone(timedelta(minutes=offset))
    ),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.one_of(
        st.just(0), st.sampled_from([1, 10, 100_000, 120_000, 999_999]), st.integers(0, 999_999)
    ),
    st.integers(-14 * 60, 14 * 60),
)


@pytest.fixture
def bundle(org):
    return add_bundles(org, ["Written"])[0]


def read(bundle, *columns):
    return Bundle.objects.for_org(bundle.org_id).filter(id=bundle.id).values_list(*columns).get()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(moment=times)
def test_a_time_reads_as_drf_writes_it(bundle, moment):
    Bundle.objects.for_org(bundle.org_id).filter(id=bundle.id).update(created_at=moment)
    (written,) = read(bundle, WireTime("created_at"))
    assert written == DRF_TIME.to_representation(moment) == wire_time(moment)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=st.uuids())
def test_an_id_reads_as_str_writes_it(org, value):
    (bundle,) = add_bundles(org, ["Any"])
    Bundle.objects.for_org(org).filter(id=bundle.id).update(id=value)
    (written,) = Bundle.objects.for_org(org).filter(id=value).values_list(WireId("id")).get()
    assert written == str(value)
    Bundle.objects.for_org(org).filter(id=value).delete()


def test_a_foreign_key_and_a_null_time(bundle):
    org_id, created = read(bundle, WireId("org_id"), WireTime(F("created_at")))
    assert org_id == str(bundle.org_id)
    assert created == wire_time(bundle.created_at)
    nothing = Cast(Value(None), DateTimeField())
    (missing,) = Bundle.objects.for_org(bundle.org_id).values_list(WireTime(nothing)).get()
    assert missing is None


def test_a_time_in_a_filter_keeps_its_own_column(bundle):
    """The expressions change only what is selected: filtering and ordering still use the
    column itself."""
    later = bundle.created_at + timedelta(seconds=1)
    rows = (
        Bundle.objects.for_org(bundle.org_id)
        .filter(created_at__lt=later)
        .order_by("-created_at")
        .values_list(WireTime("created_at"), flat=True)
    )
    assert list(rows) == [wire_time(bundle.created_at)]


def test_wire_columns_pick_an_expression_by_field():
    columns = wire_columns(
        Activity, ("org_id", "id", "module_id", "seq", "settings", "created_at", "updated_at")
    )
    kinds = [type(column).__name__ if not isinstance(column, str) else column for column in columns]
    assert kinds == ["WireId", "WireId", "WireId", "seq", "settings", "WireTime", "WireTime"]
    with pytest.raises(KeyError):
        wire_columns(Activity, ("no_such_column",))


def test_columns_read_through_a_key_are_the_related_rows(org):
    """A course's columns read from its modules, through their key to it: its id is the
    key's column, its organization the module's own, any other the course's."""
    module = ModuleFactory(course=CourseFactory(org=org, title="Through"))
    names = ("id", "org_id", "title", "created_at")
    columns = wire_columns(Course, names, through="course")
    sources = [column if isinstance(column, str) else column.source_expressions[0].name
               for column in columns]  # fmt: skip
    assert sources == ["course_id", "org_id", "course__title", "course__created_at"]
    through = Module.objects.for_org(org).filter(id=module.id).values_list(*columns)
    direct = Course.objects.for_org(org).values_list(*wire_columns(Course, names))
    assert list(through) == list(direct)


def test_another_database_is_refused_not_misread():
    compiler = Bundle.objects.none().query.get_compiler(connection=connection)
    for expression in (WireId("id"), WireTime("created_at")):
        with pytest.raises(NotSupportedError):
            expression.as_sql(compiler, connection)
