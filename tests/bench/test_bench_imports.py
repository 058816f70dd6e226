"""bench/ is a tool of its own: it uses the harness (harness/) and the service, never the
tests, so a change to the tests cannot break the bench, nor the bench's needs shape them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_nothing_in_bench_imports_the_tests():
    found = {
        str(path.relative_to(ROOT)): sorted(
            name for name in imported(path) if name == "tests" or name.startswith("tests.")
        )
        for path in sorted((ROOT / "bench").rglob("*.py"))
    }
    assert {path: names for path, names in found.items() if names} == {}
    assert "bench/load.py" in found  # the scan saw the bench
