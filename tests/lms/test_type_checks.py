"""`make lint` runs mypy on the files pyproject.toml's ``[tool.mypy]`` lists: the core
(``lms/``) and every app's services, selectors, wire reads and views, a new app's included."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("services.py", "selectors.py", "wire_reads.py", "views.py")


def test_mypy_checks_the_core_and_every_apps_reads_writes_and_views():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    listed = set(config["files"])
    apps = [path.parent for path in ROOT.glob("*/apps.py")]
    assert apps, "the apps are found by their apps.py"
    wanted = {f"{app.name}/{name}" for app in apps for name in CHECKED if (app / name).exists()}
    assert "lms" in listed
    assert wanted - listed == set(), "add them to [tool.mypy] files in pyproject.toml"
    assert "mypy_django_plugin.main" in config["plugins"]


def test_make_lint_runs_mypy():
    lint = (ROOT / "Makefile").read_text().split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "$(BIN)/mypy" in lint
