"""gunicorn.conf.py: what its settings come to and what its hooks do (the server itself is
run in tests/deployment/test_deploy.py and tests/lms/test_db_connections.py)."""

from __future__ import annotations

import gc
import os
import runpy
from pathlib import Path

import pytest

CONFIG = Path(__file__).resolve().parents[2] / "gunicorn.conf.py"


def load(monkeypatch, **env: str) -> dict:
    for name in ("LMS_PRELOAD", "LMS_MAX_REQUESTS", "LMS_REUSE_PORT", "LMS_WORKERS", "LMS_THREADS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONFIG))


@pytest.fixture
def unfrozen():
    """Each test starts and ends with nothing frozen, whatever the hooks did."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_a_worker_per_usable_cpu_with_one_thread_unless_asked(monkeypatch):
    config = load(monkeypatch)
    assert (config["workers"], config["threads"]) == (len(os.sched_getaffinity(0)), 1)
    assert config["worker_class"] == "gthread"
    config = load(monkeypatch, LMS_WORKERS="3", LMS_THREADS="4")
    assert (config["workers"], config["threads"]) == (3, 4)


def test_workers_are_not_retired_after_a_count_unless_asked(monkeypatch):
    assert load(monkeypatch)["max_requests"] == 0
    config = load(monkeypatch, LMS_MAX_REQUESTS="20000")
    assert (config["max_requests"], config["max_requests_jitter"]) == (20000, 1000)


def test_each_worker_listens_on_its_own_socket_unless_asked(monkeypatch):
    assert load(monkeypatch)["reuse_port"] is True
    assert load(monkeypatch, LMS_REUSE_PORT="false")["reuse_port"] is False


def test_a_preloading_master_freezes_what_it_loaded_before_each_fork(monkeypatch, unfrozen):
    config = load(monkeypatch)
    assert config["preload_app"] is True
    config["post_worker_init"](None)
    assert gc.get_freeze_count() == 0  # the master froze it already: nothing for the worker
    config["pre_fork"](None, None)
    assert gc.get_freeze_count() > 0


def test_without_preloading_each_worker_freezes_what_it_loaded(monkeypatch, unfrozen):
    config = load(monkeypatch, LMS_PRELOAD="false")
    config["pre_fork"](None, None)
    assert gc.get_freeze_count() == 0
    config["post_worker_init"](None)
    assert gc.get_freeze_count() > 0
