"""lms.bounded: a process's bounded memory keeps at most its limit, drops the oldest half
when a new key would pass it, and stays whole when threads share it."""

from __future__ import annotations

import sys
import threading

import pytest

from lms.bounded import BoundedCache


def test_it_answers_what_it_was_told_and_the_default_otherwise():
    cache = BoundedCache(4)
    cache.set("a", 1)
    cache.set("b", None)
    assert (cache.get("a"), cache.get("b", "x"), cache.get("c"), cache.get("c", 0)) == (
        1,
        None,
        None,
        0,
    )
    assert len(cache) == 2


def test_a_new_key_past_the_limit_drops_the_oldest_half_in_insertion_order():
    cache = BoundedCache(4)
    for n in range(4):
        cache.set(n, n)
    cache.set(0, "again")  # an update keeps its place and drops nothing
    assert len(cache) == 4 and cache.get(0) == "again"
    cache.set(4, 4)
    assert [cache.get(n) for n in range(5)] == [None, None, 2, 3, 4]
    assert len(cache) == 3


@pytest.mark.parametrize("limit", [1, 2, 3, 7])
def test_it_never_holds_more_than_its_limit(limit):
    cache = BoundedCache(limit)
    for n in range(limit * 5):
        cache.set(n, n)
        assert 1 <= len(cache) <= limit
        assert cache.get(n) == n  # the key just set is always kept


def test_a_limit_below_one_is_refused():
    with pytest.raises(ValueError):
        BoundedCache(0)


def test_pop_and_clear_forget():
    cache = BoundedCache(4)
    cache.set("a", 1)
    cache.set("b", 2)
    assert cache.pop("a") == 1
    assert cache.pop("a", "gone") == "gone"
    assert cache.get("a") is None and len(cache) == 1
    cache.clear()
    assert len(cache) == 0 and cache.get("b") is None


def test_threads_sharing_it_keep_it_whole():
    """Threads setting, reading and forgetting many keys at once, with evictions all the
    while: no error, never past the limit, and every remembered value is its key's."""
    cache = BoundedCache(64)
    errors = []
    start = threading.Barrier(6)

    def work(offset):
        try:
            start.wait()
            for n in range(20_000):
                key = (offset * 7 + n) % 500
                cache.set(key, key * 2)
                found = cache.get((key + 3) % 500)
                if found is not None and found != ((key + 3) % 500) * 2:
                    errors.append(found)
                if n % 11 == 0:
                    cache.pop((key + 5) % 500)
                if len(cache) > 64:
                    errors.append(len(cache))
        except Exception as exc:  # any error of a thread fails the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as the interpreter allows
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert len(cache) <= 64
