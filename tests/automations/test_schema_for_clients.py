"""The OpenAPI schema as a client generator and a Swagger UI user read it: an action's `type`
tells its schema apart (a discriminator), the automation writes carry realistic examples
(one webhook, one e-mail) that the server accepts, and descriptions speak to consumers."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from automations.models import Automation
from automations.registry import ACTION_TYPES

pytestmark = pytest.mark.django_db

WRITES = [("/api/automations", "post"), ("/api/automations/{id}", "patch")]


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        return Client().get("/api/schema/", {"format": "json"}).json()


def resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def request_schema(schema: dict, path: str, method: str) -> dict:
    body = schema["paths"][path][method]["requestBody"]["content"]["application/json"]
    return resolve(schema, body["schema"])


def body_shapes(schema: dict, path: str, method: str) -> list[dict]:
    """The body's schema of each trigger (test_conditions_schema.py tells them apart)."""
    union = request_schema(schema, path, method)
    return [resolve(schema, shape) for shape in union.get("oneOf") or union["anyOf"]]


@pytest.mark.parametrize(("path", "method"), WRITES)
def test_an_actions_type_is_the_discriminator_of_its_schema(schema, path, method):
    # Each trigger's shape has its own list (its send_email addresses the roles it has:
    # test_conditions_schema.py), each of the same form.
    for shape in body_shapes(schema, path, method):
        items = shape["properties"]["actions"]["items"]
        mapping = items["discriminator"]["mapping"]
        assert items["discriminator"]["propertyName"] == "type"
        assert set(mapping) == set(ACTION_TYPES)
        assert [ref["$ref"] for ref in items["oneOf"]] == list(mapping.values())
        for name, ref in mapping.items():
            action = resolve(schema, {"$ref": ref})
            assert action["required"] == ["type", "input"]
            kind = action["properties"]["type"]
            kind = resolve(schema, kind["allOf"][0]) if "allOf" in kind else resolve(schema, kind)
            # One value per action type: a generated client types it, instead of a pattern.
            assert kind == {"type": "string", "enum": [name]}
            fields = action["properties"]["input"]["properties"]
            assert set(fields) == {field.name for field in ACTION_TYPES[name].fields}


@pytest.mark.parametrize(("path", "method"), WRITES)
def test_the_writes_have_one_webhook_and_one_email_example(schema, path, method):
    examples = schema["paths"][path][method]["requestBody"]["content"]["application/json"][
        "examples"
    ]
    assert set(examples) == {"Webhook", "Email"}
    assert [a["type"] for a in examples["Webhook"]["value"]["actions"]] == ["webhook"]
    assert [a["type"] for a in examples["Email"]["value"]["actions"]] == ["send_email"]
    # Realistic values, not strings generated from a pattern.
    strings = re.findall(r'"((?:[^"\\]|\\.)*)"', json.dumps(examples))
    assert max(len(text) for text in strings) < 120


def test_the_examples_are_accepted_by_the_server(api, owner, schema):
    create = schema["paths"]["/api/automations"]["post"]["requestBody"]["content"][
        "application/json"
    ]["examples"]
    ids = []
    for name in ("Webhook", "Email"):
        response = api.post("/api/automations", create[name]["value"], token=owner.token)
        assert response.status_code == 201, response.content
        ids.append(response.json()["id"])
    patch = schema["paths"]["/api/automations/{id}"]["patch"]["requestBody"]["content"][
        "application/json"
    ]["examples"]
    for automation_id, name in zip(ids, ("Email", "Webhook"), strict=True):
        response = api.request(
            "PATCH", f"/api/automations/{automation_id}", patch[name]["value"], token=owner.token
        )
        assert response.status_code == 200, response.content
        assert response.json()["actions"] == patch[name]["value"]["actions"]
    assert Automation.all_orgs.count() == 2


def _strings(node, path=""):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _strings(value, f"{path}/{index}")
    elif isinstance(node, str):
        yield path, node


INTERNAL = re.compile(
    r"contract|\bregistry\b|``|\b[a-z_]+/[a-z_]+\.(?:py|md)\b|\b[4-8]\.\d\b(?! ?[A-Za-z]iB)"
)


def test_descriptions_speak_to_consumers(schema):
    """No section numbers of the contract, no repository paths or internal names: links to
    the API guide instead."""
    found = [
        (path, text)
        for path, text in _strings(schema)
        if path.endswith(("/description", "/summary", "/title")) and INTERNAL.search(text)
    ]
    assert not found, found
    assert "/api/docs/guide" in schema["info"]["description"]
    assert schema["externalDocs"]["url"] == "/api/docs/guide"


def test_patterns_stay_short_enough_to_read(schema):
    longest = max((len(text), path) for path, text in _strings(schema) if path.endswith("/pattern"))
    assert longest[0] < 520, longest


def test_the_guide_the_schema_links_to_is_served_as_html_with_its_contents():
    response = Client().get("/api/docs/guide")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    text = response.content.decode()
    assert text.startswith("<!doctype html>")
    assert '<h1 id="api-guide">API guide' in text and '<h2 id="automations">' in text
    contents = text.split('<nav aria-label="Contents">', 1)[1].split("</nav>", 1)[0]
    assert '<a href="#automations">Automations (4.7, 7.1, 7.2)</a>' in contents
    # Every section and subsection is listed, and every entry lands on a heading.
    headings = set(re.findall(r'<h[23] id="([^"]+)"', text))
    assert set(re.findall(r'href="#([^"]+)"', contents)) == headings
    assert len(headings) > 25


def test_every_operation_links_to_its_own_section_of_the_guide(schema):
    anchors = set(re.findall(r' id="([^"]+)"', Client().get("/api/docs/guide").content.decode()))
    links = {
        path: re.findall(r"\]\(/api/docs/guide([^)]*)\)", text)
        for path, text in _strings(schema)
        if path.endswith("/description")
    }
    operations = {
        f"/paths/{route}/{method}/description"
        for route, methods in schema["paths"].items()
        for method in methods
    }
    assert all(links.get(path) for path in operations), operations - {p for p in links if links[p]}
    for path, fragments in links.items():
        if path == "/info/description":
            continue  # the whole guide
        assert all(f.startswith("#") and f[1:] in anchors for f in fragments), (path, fragments)
