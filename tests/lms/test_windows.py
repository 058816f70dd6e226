"""lms.db.windows: a sliding window counted in one statement, on both databases, its rows
read back through the ORM."""

from __future__ import annotations

import sqlite3

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lms.db.windows import SlidingWindow
from organizations.models import ThrottleWindow

pytestmark = pytest.mark.django_db

T0 = 1_718_000_000.123456
WINDOWS = SlidingWindow(ThrottleWindow)


def test_sqlite_runs_the_upsert_it_is_given():
    """``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` needs SQLite 3.35."""
    assert sqlite3.sqlite_version_info >= (3, 35)


def test_a_hit_answers_how_many_the_window_holds_until_it_is_full():
    held = [WINDOWS.hit("k", now=T0 + n, window=60, limit=3) for n in range(4)]
    assert held == [1, 2, 3, None]
    assert ThrottleWindow.objects.get(key="k").hits == [T0, T0 + 1, T0 + 2]
    # The hit at T0 has left the window of T0 + 60.5: two kept, and this one.
    assert WINDOWS.hit("k", now=T0 + 60.5, window=60, limit=3) == 3
    assert ThrottleWindow.objects.get(key="k").hits == [T0 + 1, T0 + 2, T0 + 60.5]


def test_a_refused_hit_writes_nothing():
    for n in range(2):
        WINDOWS.hit("k", now=T0 + n, window=60, limit=2)
    before = ThrottleWindow.objects.values_list("hits", "expires").get(key="k")
    assert WINDOWS.hit("k", now=T0 + 59, window=60, limit=2) is None
    assert ThrottleWindow.objects.values_list("hits", "expires").get(key="k") == before


def test_times_are_kept_exactly_in_the_order_written():
    times = [T0 + 0.000001, T0 - 0.5, T0 + 1 / 3]
    for now in times:
        WINDOWS.hit("exact", now=now, window=60, limit=10)
    assert WINDOWS.hits("exact") == times
    assert ThrottleWindow.objects.get(key="exact").hits == times


def test_hits_of_an_unknown_key_are_none():
    assert WINDOWS.hits("nobody") == []


def test_expires_moves_two_windows_ahead_only_once_less_than_a_window_is_left():
    def expires() -> float:
        return ThrottleWindow.objects.get(key="k").expires

    WINDOWS.hit("k", now=T0, window=60, limit=100)
    assert expires() == T0 + 120
    WINDOWS.hit("k", now=T0 + 59, window=60, limit=100)
    assert expires() == T0 + 120  # 61 seconds left: as it was
    WINDOWS.hit("k", now=T0 + 61, window=60, limit=100)
    assert expires() == T0 + 181


def test_a_counted_hit_is_one_statement_and_a_refused_one_too():
    WINDOWS.hit("k", now=T0, window=60, limit=1)
    with CaptureQueriesContext(connection) as counted:
        assert WINDOWS.hit("k", now=T0 + 61, window=60, limit=1) == 1
    with CaptureQueriesContext(connection) as refused:
        assert WINDOWS.hit("k", now=T0 + 62, window=60, limit=1) is None
    assert len(counted) == len(refused) == 1
    assert counted[0]["sql"].lstrip().startswith("INSERT INTO")
