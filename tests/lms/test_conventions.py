"""The conventions every app follows (docs/architecture.md, "Conventions"): where a `Shape` is
declared, how a path parameter is named, how an operation is named."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest
from django.urls import URLPattern, get_resolver

from lms.ids import IdConverter

ROOT = Path(__file__).resolve().parents[2]
APPS = ("organizations", "downloads", "learn", "bundles", "automations")
# Where Shape is defined and its docstring's example.
SHAPES_HOME = ROOT / "lms" / "web" / "shapes.py"


def shapes_declared(source: str) -> list[int]:
    """The lines of ``source`` that call ``Shape(...)``."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "Shape"
    )


def test_the_shape_check_finds_a_declaration():
    assert shapes_declared("from x import Shape\nA = Shape(S)\nB = shapes.Shape(T)\n") == [2, 3]


def test_a_shape_is_declared_in_its_apps_serializers_beside_its_serializer():
    """``NAME = Shape(NameSerializer)`` is in the app's ``serializers.py``, never in a view or
    a read: the one place a reader looks for an answer's shape."""
    found = {}
    for app in ("lms", *APPS):
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in path.parts or path == SHAPES_HOME:
                continue
            lines = shapes_declared(path.read_text())
            if lines and path.name != "serializers.py":
                found[str(path.relative_to(ROOT))] = lines
    assert found == {}


def api_routes() -> list[URLPattern]:
    return [
        route
        for route in get_resolver().url_patterns
        if isinstance(route, URLPattern) and str(route.pattern).startswith("api/")
    ]


CAMEL_CASE = re.compile(r"^[a-z]+(?:[A-Z][a-z]*)*$")


@pytest.mark.parametrize("route", api_routes(), ids=lambda route: str(route.pattern))
def test_a_path_parameter_is_named_as_the_contract_writes_it(route):
    """camelCase as in the contract's paths; an id is read by the ``id`` converter and named
    ``id`` or ``<thing>Id``; each handler of the view takes the parameters by those names."""
    converters = route.pattern.converters
    for name, converter in converters.items():
        assert CAMEL_CASE.match(name), name
        is_id = name == "id" or name.endswith("Id")
        assert is_id == isinstance(converter, IdConverter), name
    view = getattr(route.callback, "view_class", None)
    for method in view.http_method_names if view is not None else ():
        handler = getattr(view, method, None)
        if handler is None or method == "options":
            continue
        named = [
            parameter.name
            for parameter in inspect.signature(handler).parameters.values()
            if parameter.kind is parameter.POSITIONAL_OR_KEYWORD
            and parameter.name not in {"self", "request"}
        ]
        assert set(named) <= set(converters), (method, named)


OPERATION_ID = re.compile(r"^[a-z]+(?:_[a-z]+)+$")


def test_an_operation_id_is_a_verb_and_its_object_in_snake_case(api):
    """``list_bundles``, ``read_course_outline``, ``enroll_members``: what a generated client
    names its method."""
    schema = api.get("/api/schema/", query={"format": "json"}).json()
    ids = [
        operation["operationId"]
        for methods in schema["paths"].values()
        for operation in methods.values()
        if isinstance(operation, dict) and "operationId" in operation
    ]
    assert ids
    assert [name for name in ids if not OPERATION_ID.match(name)] == []
