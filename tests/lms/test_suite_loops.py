"""The two loops of the README: `make quick` runs every test that starts no process, server
or browser; `make test` runs them all, the ``processes`` ones on one xdist worker in turn.
A test that starts a process without the mark fails (tests/conftest.py), so the split stays
true as tests are added."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import _starts_processes

ROOT = Path(__file__).resolve().parents[2]


def test_a_test_not_marked_processes_cannot_start_one():
    with pytest.raises(RuntimeError, match=r"starts a process: mark it @pytest\.mark\.processes"):
        subprocess.run(["true"], check=True)


@pytest.mark.processes
def test_a_test_marked_processes_may():
    assert subprocess.run(["true"], check=True).returncode == 0


class _Item:
    def __init__(self, fixturenames: list[str]) -> None:
        self.fixturenames = fixturenames

    def get_closest_marker(self, name: str) -> None:
        return None


def test_a_test_on_the_live_server_is_one_of_the_processes():
    assert _starts_processes(_Item(["db", "live_server"]))
    assert not _starts_processes(_Item(["db", "client"]))


def test_every_test_of_the_run_is_marked_and_grouped_by_the_rule(request):
    grouped = request.config.pluginmanager.hasplugin("xdist")
    for item in request.session.items:
        marked = item.get_closest_marker("processes") is not None
        assert marked == _starts_processes(item), item.nodeid
        if grouped:
            group = item.get_closest_marker("xdist_group")
            assert (group is not None and group.args == ("processes",)) == marked, item.nodeid


def test_make_quick_leaves_out_the_processes_and_make_test_keeps_them():
    makefile = (ROOT / "Makefile").read_text()
    recipe = lambda target: re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)  # noqa: E731
    assert '-m "not processes"' in recipe("quick")
    assert "-m" not in recipe("test").split("pytest", 1)[1]
    assert "make quick" in (ROOT / "README.md").read_text()
