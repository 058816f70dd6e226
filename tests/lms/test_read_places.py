"""Where a read lives (docs/architecture.md, "Inside an app"), kept: a read that answers the
wire's text (rows for a ``Shape``, ids and times written by the database) is in the app's
``wire_reads.py``; a read that answers domain values is in ``selectors.py``; a
``services.py`` holds writes only. A walk over the syntax trees, as ``test_layers.py``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.lms.test_layers import FEATURES, ROOT

# What a module that answers the wire's text imports: the database's wire text, the shapes,
# and the serializers that declare them.
WIRE_MODULES = ("lms.db.wire", "lms.web.shapes")
# Calls that write: Django's (a transaction included) and ``lms.db.statements``'.
WRITE_METHODS = {
    "atomic",
    "bulk_create",
    "bulk_update",
    "create",
    "delete",
    "get_or_create",
    "save",
    "set_password",
    "update",
    "update_or_create",
}
VALIDATION_ERRORS = {"ValidationError", "DjangoValidationError", "validation_error"}


def _modules(name: str) -> list[Path]:
    return sorted(path for app in FEATURES for path in (ROOT / app).glob(name))


def _imported(tree: ast.Module) -> set[str]:
    """Every module ``tree`` imports from, by its full name."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module if node.level == 0 else f".{node.module}")
    return found


def _wire_imports(tree: ast.Module) -> list[str]:
    """What of the wire ``tree`` imports: ``lms.db.wire``, the shapes, a serializers module."""
    return sorted(
        module
        for module in _imported(tree)
        if module in WIRE_MODULES or module.rsplit(".", 1)[-1] == "serializers"
    )


def _calls_compiled(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == "Compiled"
        for node in ast.walk(tree)
    )


def reads_in_services(source: str) -> list[str]:
    """The reads a ``services.py`` of ``source`` defines: a compiled read (``Compiled``), and
    each public function that neither writes nor checks. A function writes when it runs in a
    transaction (decorated with ``transaction.atomic``, or with a decorator of the module
    that opens one), calls a writing method of Django's, ``lms.db.statements`` or a
    module-level ``Insert``, or calls a function of the module that writes; it checks when
    it raises a ``ValidationError`` (a write's input refused)."""
    tree = ast.parse(source)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}

    def in_transaction(function: ast.FunctionDef) -> bool:
        for decorator in function.decorator_list:
            if "atomic" in ast.unparse(decorator):
                return True
            own = functions.get(ast.unparse(decorator))
            if own is not None and "atomic" in ast.unparse(own):
                return True
        return False

    def writes(name: str, seen: frozenset[str] = frozenset()) -> bool:
        function = functions[name]
        if in_transaction(function):
            return True
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            called = node.func
            if isinstance(called, ast.Attribute) and (
                called.attr in WRITE_METHODS
                or (isinstance(called.value, ast.Name) and called.value.id == "statements")
            ):
                return True
            if isinstance(called, ast.Name):
                if called.id.startswith("_INSERT"):
                    return True
                if (
                    called.id in functions
                    and called.id not in seen
                    and writes(called.id, seen | {name})
                ):
                    return True
        return False

    def checks(function: ast.FunctionDef) -> bool:
        for node in ast.walk(function):
            if isinstance(node, ast.Raise) and node.exc is not None:
                raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if ast.unparse(raised).rsplit(".", 1)[-1] in VALIDATION_ERRORS:
                    return True
        return False

    found = ["a compiled read (Compiled)"] if _calls_compiled(tree) else []
    found += [
        name
        for name, function in functions.items()
        if not name.startswith("_") and not writes(name) and not checks(function)
    ]
    return found


@pytest.mark.parametrize("path", _modules("services.py"), ids=lambda path: path.parent.name)
def test_services_hold_no_read(path):
    """A read a write needs (a lock, the rows it changes) is a selector or a wire read that
    the service calls; a service reads nothing of its own beyond the queries of its writes."""
    assert not reads_in_services(path.read_text()), f"{path.relative_to(ROOT)} defines reads"


@pytest.mark.parametrize("path", _modules("selectors.py"), ids=lambda path: path.parent.name)
def test_selectors_answer_domain_values_not_wire_text(path):
    """A selector imports neither the wire's text (``lms.db.wire``) nor a shape nor a
    serializer: what answers a ``Shape`` is a wire read."""
    tree = ast.parse(path.read_text())
    assert not _wire_imports(tree), f"{path.relative_to(ROOT)} answers the wire"


def test_the_wire_text_is_read_only_in_wire_reads():
    """``lms.db.wire`` (ids and times written as the wire's text) is used by the apps only in
    their ``wire_reads.py``."""
    users = [
        str(path.relative_to(ROOT))
        for path in _modules("**/*.py")
        if "lms.db.wire" in _imported(ast.parse(path.read_text())) and path.name != "wire_reads.py"
    ]
    assert not users


@pytest.mark.parametrize(
    "source",
    [
        "from lms.db.compiled import Compiled\n_READ = Compiled(lambda id: None)\n",
        "def links(*, org):\n    return list(org.links.all())\n",
        "def links(*, org):\n    return _links(org)\n\ndef _links(org):\n    return []\n",
    ],
    ids=["compiled", "a-read", "a-read-through-a-helper"],
)
def test_the_guard_finds_a_read_in_services(source):
    assert reads_in_services(source)


@pytest.mark.parametrize(
    "source",
    [
        "@transaction.atomic\ndef add(*, org):\n    return org\n",
        "def add(*, org):\n    return _add(org)\n\n@transaction.atomic\ndef _add(org):\n    pass\n",
        "def add(*, org):\n    org.save()\n",
        "def add(*, link):\n    statements.delete(Link, pk=link.id)\n",
        "def check(*, names):\n    if names:\n        raise ValidationError({'names': []})\n",
    ],
    ids=["atomic", "through-a-helper", "a-save", "a-statement", "a-check"],
)
def test_the_guard_lets_writes_and_checks_be(source):
    assert not reads_in_services(source)
