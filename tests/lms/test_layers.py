"""The layers of docs/architecture.md, kept: the core (``lms/``) imports no feature app, and
a feature app imports no other feature app except through the ones it is allowed to build
on. A short walk over the syntax trees; no import-time side effects are needed."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
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


# The HTTP edge, which a write or a read in domain terms never imports: DRF, Django's
# requests and responses, the project's edge, an answer with its status (lms.idempotency).
HTTP_MODULES = ("rest_framework", "django.http", "http", "lms.web", "lms.idempotency")
HTTP_NAMES = {"status_code", "response_status", "Response", "HttpResponse", "JsonResponse"}
HTTP_NAMES |= {"HTTPStatus", "Answer"}
# A 400 built with the wire's names: a view's alone; a domain rule raises Django's
# ValidationError, which the edge names (lms.errors.WIRE_NAMES).
HTTP_NAMES |= {"validation_error"}


def _is_status(node: ast.AST | None) -> bool:
    """An integer that can only be an HTTP status here: 100 to 599."""
    return (
        isinstance(node, ast.Constant)
        and type(node.value) is int
        and 100 <= node.value <= 599
        and node.value % 100 < 32
    )


def http_terms(source: str) -> list[str]:
    """Where ``source`` speaks HTTP: an import of the edge, a name of a response or a status,
    a status returned (alone or first of a tuple) or passed as ``status=``, a parameter
    ``status: int``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        what = None
        if isinstance(node, ast.Import):
            what = next((a.name for a in node.names if _under(a.name)), None)
        elif isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names if a.name in HTTP_NAMES]
            what = node.module if _under(node.module or "") else next(iter(names), None)
        elif isinstance(node, ast.Name) and node.id in HTTP_NAMES:
            what = node.id
        elif isinstance(node, ast.Attribute) and node.attr in HTTP_NAMES:
            what = node.attr
        elif isinstance(node, ast.Return):
            value = node.value
            first = value.elts[0] if isinstance(value, ast.Tuple) and value.elts else value
            what = "a returned status" if _is_status(first) else None
        elif isinstance(node, ast.keyword) and node.arg in HTTP_NAMES:
            what = node.arg
        elif isinstance(node, ast.keyword) and node.arg == "status" and _is_status(node.value):
            what = "status="
        elif isinstance(node, ast.arg) and node.arg == "status":
            annotation = node.annotation
            what = (
                "status: int"
                if isinstance(annotation, ast.Name) and annotation.id == "int"
                else None
            )
        if what is not None:
            found.append(f"{node.lineno}: {what}")
    return sorted(found, key=lambda line: (int(line.split(":")[0]), line))


def _under(module: str) -> bool:
    """``module`` is one of HTTP_MODULES or inside one (``http`` but not ``httpx``)."""
    return any(module == m or module.startswith(m + ".") for m in HTTP_MODULES)


def test_the_http_check_finds_each_way_of_speaking_http():
    # The accept's wrapper as it once was in organizations/services.py, and the rest.
    source = """
from lms.idempotency import Answer, remembered
from rest_framework import status
import django.http
from http import HTTPStatus
import httpx
def accept_invite_once(*, raw_token, key, answer) -> Answer:
    if key is None:
        return Answer(201, answer(accept_invite(raw_token=raw_token)))
    def write() -> tuple[int, dict]:
        return 201, answer(accepted[0])
    def remember(status: int, body: dict) -> None:
        Replay.objects.create(response_status=status)
    return remembered(write=write, remember=remember)
def other(response):
    raise Conflict(response.status_code, status=409)
def members(unknown):
    raise validation_error(unknown)
def domain(limit=500):
    return invite.status, 1
"""
    assert http_terms(source) == [
        "2: lms.idempotency",
        "3: rest_framework",
        "4: django.http",
        "5: http",
        "7: Answer",
        "9: Answer",
        "11: a returned status",
        "12: status: int",
        "13: response_status",
        "16: status=",
        "16: status_code",
        "18: validation_error",
    ]


def test_services_and_reads_answer_in_domain_terms_not_http():
    """No service, selector or wire read speaks HTTP: none returns a status, builds a
    response or imports the edge (docs/architecture.md, "Inside an app"); the view answers."""
    found = {}
    for path in sorted(ROOT.glob("*/*.py")):
        if path.name in {"services.py", "selectors.py", "wire_reads.py"}:
            lines = http_terms(path.read_text())
            if lines:
                found[str(path.relative_to(ROOT))] = lines
    assert found == {}


def test_no_model_imports_the_http_edge():
    """A model's module imports no part of the HTTP edge (DRF, ``django.http``, ``lms.web``):
    what a model shares with the edge (the JSON nesting bound) is in the core's plain
    modules."""
    edge = ("rest_framework", "django.http", "lms.web")
    found = {}
    for path in sorted([*ROOT.glob("*/models.py"), *ROOT.glob("*/models/*.py")]):
        modules = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.append(node.module or "")
        wrong = [m for m in modules if any(m == e or m.startswith(e + ".") for e in edge)]
        if wrong:
            found[str(path.relative_to(ROOT))] = wrong
    assert found == {}


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


PACKAGES = {"lms", "harness", "bench", *FEATURES}


def project_modules() -> dict[str, Path]:
    """Every module of the project's packages by dotted name (a package by its own name)."""
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the project modules it imports, at module level or inside a function alike
    (``from a import b`` counts ``a`` and, when it is a module, ``a.b``)."""
    graph = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        graph[name] = {target for target in targets if target in modules} - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_cycles_are_found_through_imports_inside_functions():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_project_imports_itself_back():
    """No import cycle among the project's modules, counting the imports inside functions
    that would otherwise hide one (a runtime import is a cycle all the same): a module that
    needs what would import it back takes it as an argument or a registration (as
    ``automations.queue`` does for the runs' tasks) or by app label."""
    modules = project_modules()
    assert "automations.runs" in modules and "automations.tasks" in modules
    assert cycles(import_graph(modules)) == []


def imported_modules(path: Path) -> set[str]:
    """The dotted names ``path`` imports, at module level or inside a function (``from x
    import y`` as ``x.y``, which is the module ``y`` when ``x`` is a package)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def reached_past_the_api(path: Path, app: str) -> set[str]:
    """What a module of ``app`` imports of another app other than its ``api`` module."""
    return {
        module
        for module in imported_modules(path)
        if module.split(".")[0] in FEATURES - {app} and module.split(".")[1:2] != ["api"]
    }


def test_the_api_rule_finds_an_import_past_the_api(tmp_path):
    source = tmp_path / "module.py"
    source.write_text(
        "from organizations.api import Membership\n"
        "from organizations import api\n"
        "from learn.models import Course\n"
        "def later():\n"
        "    import learn.services\n"
        "    from organizations import selectors\n"
    )
    assert reached_past_the_api(source, "automations") == {
        "learn.models.Course",
        "learn.services",
        "organizations.selectors",
    }


@pytest.mark.parametrize("app", sorted(FEATURES))
def test_an_app_reaches_another_only_through_its_api(app):
    """What another app may use of an app is its ``api`` module (each app's docstring says
    what it holds); the rest of an app, its models and admin included, is its own. The
    migrations name other apps' models by label and are left out."""
    assert (ROOT / app / "api.py").exists()
    found = {
        str(path.relative_to(ROOT)): sorted(reached_past_the_api(path, app))
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts
    }
    assert {path: modules for path, modules in found.items() if modules} == {}


def _exported(app: str) -> list[str]:
    """The names of ``app``'s ``api.__all__``."""
    for node in ast.parse((ROOT / app / "api.py").read_text()).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(getattr(target, "id", None) == "__all__" for target in targets):
                return [element.value for element in node.value.elts]  # type: ignore[union-attr]
    return []


def _pointed_at(app: str) -> set[str]:
    """The models of ``app`` that another app's models point at by label (``"learn.Course"``)."""
    found = set()
    for other in FEATURES - {app}:
        found |= set(re.findall(rf'"{app}\.([A-Z]\w*)"', (ROOT / other / "models.py").read_text()))
    return found


@pytest.mark.parametrize("app", sorted(FEATURES))
def test_an_apps_api_holds_only_what_another_app_uses(app):
    """Each name of an app's ``api.py`` is imported by another app, or is a model another
    app's models point at: a name nothing outside the app uses is not exported (tests import
    the app's own modules)."""
    used = _pointed_at(app)
    for other in FEATURES - {app}:
        for path in (ROOT / other).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module == f"{app}.api":
                    used |= {alias.name for alias in node.names}
    assert sorted(set(_exported(app)) - used) == []


# SQL is written only in the database machinery (docs/architecture.md): the apps call its
# helpers with their models. Migrations keep theirs (RunSQL); bench/, harness/ and tests/
# are not the project's code.
SQL_PACKAGES = {"lms", *FEATURES}
SQL_HOME = ROOT / "lms" / "db"
RAW_SQL_CALLS = frozenset({"cursor", "execute", "executemany", "raw", "extra"})
RAW_SQL_NAMES = frozenset({"RawSQL", "RunSQL"})


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return head and f"{head}.{node.attr}"
    return None


def raw_sql(source: str, modules: Collection[str] = ()) -> list[str]:
    """Where ``source`` writes SQL of its own, each as ``"line: what"``: a call of
    ``.cursor(``, ``.execute(``, ``.executemany(``, ``.raw(`` or ``.extra(``, or ``RawSQL`` or
    ``RunSQL`` named (imported, called or reached as an attribute). A call on a project
    module (one of ``modules``, as the file imports it: ``runs.execute`` after
    ``from automations import runs``) is that module's function, not a cursor's."""
    tree = ast.parse(source)
    bound: dict[str, str] = {}  # local name -> the module it is
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    bound[head] = head
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    found = []
    for node in ast.walk(tree):
        what = None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in RAW_SQL_CALLS
        ):
            receiver = _dotted(node.func.value)
            if receiver is not None:
                head, _, rest = receiver.partition(".")
                receiver = ".".join(filter(None, [bound.get(head, head), rest]))
            if receiver not in modules:
                what = f".{node.func.attr}("
        elif isinstance(node, ast.Name) and node.id in RAW_SQL_NAMES:
            what = node.id
        elif isinstance(node, ast.Attribute) and node.attr in RAW_SQL_NAMES:
            what = node.attr
        elif isinstance(node, ast.ImportFrom):
            what = next((a.name for a in node.names if a.name in RAW_SQL_NAMES), None)
        if what is not None:
            found.append(f"{node.lineno}: {what}")
    return sorted(set(found), key=lambda line: (int(line.split(":")[0]), line))


def test_the_sql_check_finds_each_way_of_writing_sql():
    source = """
from django.db import connection, migrations
from django.db.models.expressions import RawSQL
from automations import runs
import automations.queue
import automations.tasks as tasks

with connection.cursor() as cursor:
    cursor.execute("SELECT 1")
    cursor.executemany("SELECT %s", [[1]])
Course.objects.raw("SELECT * FROM learn_course")
Course.objects.extra(where=["1 = 1"])
Course.objects.annotate(one=RawSQL("1", []))
operation = migrations.RunSQL("SELECT 1")
runs.execute(run_id)
automations.queue.execute_run(run_id)
tasks.execute_run(run_id)
"""
    modules = {"automations.runs", "automations.queue", "automations.tasks"}
    assert raw_sql(source, modules) == [
        "3: RawSQL",
        "8: .cursor(",
        "9: .execute(",
        "10: .executemany(",
        "11: .raw(",
        "12: .extra(",
        "13: RawSQL",
        "14: RunSQL",
    ]
    # Without knowing them as modules, their functions named ``execute`` look like SQL.
    assert raw_sql("from automations import runs\nruns.execute(1)\n") == ["2: .execute("]


def test_sql_is_written_only_in_the_database_machinery():
    """No module of the project's packages outside ``lms.db`` (migrations aside) takes a
    cursor or runs SQL of its own: a statement the ORM does not write is a helper of
    ``lms.db`` that the app calls with its model (``lms.db.statements``,
    ``lms.db.windows``, ``lms.db.health``)."""
    modules = set(project_modules())
    found = {}
    for package in sorted(SQL_PACKAGES):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts or path.is_relative_to(SQL_HOME):
                continue
            lines = raw_sql(path.read_text(), modules)
            if lines:
                found[str(path.relative_to(ROOT))] = lines
    assert found == {}
