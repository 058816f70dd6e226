"""Every environment variable the service reads (``lms/``, the apps, gunicorn.conf.py,
manage.py, the process harness), and every ``LMS_*`` switch the tests read, has a row in the
README's Configuration section."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ["lms", "organizations", "downloads", "learn", "bundles", "automations", "harness"]
# Read by the processes the service runs on, not set by its operators.
NOT_OURS = {"DJANGO_SETTINGS_MODULE"}


def _files(*folders: str) -> list[Path]:
    return [
        path
        for folder in folders
        for path in (ROOT / folder).rglob("*.py")
        if "migrations" not in path.parts
    ]


def _environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def names_read(path: Path) -> set[str]:
    """The constant names ``path`` reads with ``os.environ.get``/``[...]``, ``os.getenv`` or
    a helper of ``lms.env`` (``env_bool``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        key = None
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            reads = (
                (isinstance(func, ast.Attribute) and func.attr == "get" and _environ(func.value))
                or (isinstance(func, ast.Attribute) and func.attr == "getenv")
                or (isinstance(func, ast.Name) and func.id in {"getenv", "env_bool"})
            )
            key = node.args[0] if reads else None
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key = node.slice if _environ(node.value) else None
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            found.add(key.value)
    return found


def documented() -> set[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row)}


def test_the_scan_finds_each_way_of_reading_a_variable(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import os\nfrom os import environ, getenv\nfrom lms.env import env_bool\n"
        "os.environ.get('A'); os.environ['B']; os.getenv('C'); env_bool('D', True)\n"
        "environ.get('E'); getenv('F'); os.environ['G'] = 'set, not read'\n"
    )
    assert names_read(probe) == {"A", "B", "C", "D", "E", "F"}


def test_every_variable_the_service_reads_has_a_readme_row():
    files = [*_files(*SERVICE), ROOT / "gunicorn.conf.py", ROOT / "manage.py"]
    read = set().union(*(names_read(path) for path in files)) - NOT_OURS
    assert {"DATABASE_URL", "LMS_SECRET_KEY", "LMS_TIMEOUT"} <= read
    assert read - documented() == set()


def test_every_lms_switch_the_tests_read_has_a_readme_row():
    read = {name for path in _files("tests") for name in names_read(path)}
    switches = {name for name in read if name.startswith("LMS_")}
    assert "LMS_REQUIRE_BROWSER" in switches
    assert switches - documented() == set()
