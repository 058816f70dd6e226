"""The layers of docs/architecture.md, kept: the core (``lms/``) imports no feature app, and
a feature app imports no other feature app except through the ones it is allowed to build
on. A short walk over the syntax trees; no import-time side effects are needed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FEATURES = {"organizations", "downloads", "learn", "bundles", "automations"}
# What each app may import besides the core and Django's ecosystem (docs/architecture.md).
ALLOWED = {
    "lms": set(),
    "organizations": set(),
    "downloads": {"organizations"},
    "learn": {"organizations"},
    "bundles": {"organizations", "learn", "downloads"},
    "automations": {"organizations", "learn"},
}


def imported_apps(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found & FEATURES


@pytest.mark.parametrize("app", sorted(ALLOWED))
def test_an_app_imports_only_what_its_layer_allows(app):
    files = [p for p in (ROOT / app).rglob("*.py") if "migrations" not in p.parts]
    assert files
    wrong = {
        str(path.relative_to(ROOT)): sorted(imported_apps(path) - ALLOWED[app] - {app})
        for path in files
    }
    assert not {path: apps for path, apps in wrong.items() if apps}


def test_services_answer_in_domain_terms_not_http():
    """No service or selector returns an HTTP status or imports DRF (docs/architecture.md)."""
    root = ROOT
    offenders = []
    for path in [*root.glob("*/services.py"), *root.glob("*/selectors.py")]:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            module = None
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
            elif isinstance(node, ast.Import):
                module = ",".join(alias.name for alias in node.names)
            if module and "rest_framework" in module:
                offenders.append(str(path.relative_to(root)))
            if isinstance(node, ast.Name) and node.id in {"status_code", "Response"}:
                offenders.append(str(path.relative_to(root)))
        if "status_code" in path.read_text():
            offenders.append(str(path.relative_to(root)))
    assert not offenders


def test_the_completion_rules_are_pure():
    """``learn/completion.py`` imports the standard library only: no Django, no DRF, no app,
    so its property tests need no database and its values cannot reach for one."""
    path = ROOT / "learn" / "completion.py"
    tree = ast.parse(path.read_text())
    modules = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert modules <= {"__future__", "base64", "math", "collections", "dataclasses", "typing"}
