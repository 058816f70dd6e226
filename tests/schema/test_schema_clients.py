"""The schema as client generators read it: ``Error.error`` is an enum of every code the
server sends, ``remaining`` is one named schema (``Remaining``), openapi-python-client
generates a client from it without a warning, and openapi-typescript's types compile under
``tsc --strict``.

The TypeScript check needs Node's tools installed beforehand (nothing is downloaded here):
``LMS_NODE_TOOLS`` names a ``node_modules/.bin`` holding ``openapi-typescript`` and
``tsc`` (default ``var/node-tools/node_modules/.bin``, where .ci/run installs them when
npm is available); without them it skips with the reason."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from automations.registry import TRIGGERS
from learn.completion import RULE_TYPES
from lms import errors
from tests.automations.test_sends_and_retries import EVENT_DATA

pytestmark = pytest.mark.django_db

# CONTRACT section 3's table.
CONTRACT_CODES = {
    "validation_error",
    "malformed_request",
    "unauthenticated",
    "permission_denied",
    "not_enrolled",
    "not_found",
    "method_not_allowed",
    "conflict",
    "invite_unavailable",
    "payload_too_large",
    "unsupported_media_type",
    "throttled",
    "internal_error",
    "service_unavailable",
}
NODE_TOOLS = Path(
    os.environ.get("LMS_NODE_TOOLS") or Path(settings.VAR_DIR) / "node-tools/node_modules/.bin"
)


@pytest.fixture
def schema_file(tmp_path) -> Path:
    path = tmp_path / "schema.json"
    path.write_text(Client().get("/api/schema/", {"format": "json"}).content.decode())
    return path


def test_the_error_code_is_an_enum_of_every_code_the_server_sends(schema_file):
    schema = json.loads(schema_file.read_text())
    enum = schema["components"]["schemas"]["Error"]["properties"]["error"]["enum"]
    assert enum == errors.codes() and set(enum) >= CONTRACT_CODES


def test_remaining_is_declared_once_and_named(schema_file):
    text = schema_file.read_text()
    schema = json.loads(text)
    assert "oneOf" in schema["components"]["schemas"]["Remaining"]
    assert text.count('"title":"open remaining"') + text.count('"title": "open remaining"') == 1
    for name in ("OutlineActivity", "ActivityProgress", "ProgressResult"):
        remaining = schema["components"]["schemas"][name]["properties"]["remaining"]
        assert remaining["allOf"] == [{"$ref": "#/components/schemas/Remaining"}]
        assert remaining["nullable"] is True


def test_a_run_events_data_is_typed_per_trigger(schema_file):
    schema = json.loads(schema_file.read_text())
    shapes = schema["components"]["schemas"]["RunEvent"]["properties"]["data"]["oneOf"]
    assert {shape["title"]: tuple(shape["required"]) for shape in shapes} == {
        f"{name} data": trigger.data for name, trigger in TRIGGERS.items()
    }
    assert all(shape["additionalProperties"] is False for shape in shapes)
    assert EVENT_DATA["invite.accepted"] == set(TRIGGERS["invite.accepted"].data)


def test_an_activitys_settings_type_the_six_completion_rules(schema_file):
    schema = json.loads(schema_file.read_text())
    settings_schema = schema["components"]["schemas"]["ActivitySettings"]
    rules = settings_schema["properties"]["completion"]["oneOf"]
    assert [rule["properties"]["type"]["enum"] for rule in rules] == [[k] for k in RULE_TYPES]
    assert {rule["title"]: rule["required"] for rule in rules}["score rule"] == [
        "type",
        "passingScore",
    ]
    activity = schema["components"]["schemas"]["Activity"]["properties"]["settings"]
    assert activity["allOf"] == [{"$ref": "#/components/schemas/ActivitySettings"}]


@pytest.mark.processes
def test_openapi_python_client_generates_without_warnings(schema_file, tmp_path):
    generator = Path(sys.executable).parent / "openapi-python-client"
    if not generator.exists():
        pytest.skip("openapi-python-client is not installed: pip install -e '.[dev]'")
    done = subprocess.run(
        [str(generator), "generate", "--path", str(schema_file), "--output-path",
         str(tmp_path / "client"), "--overwrite"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PATH": f"{generator.parent}:{os.environ.get('PATH', '')}"},
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Warning" not in output, output
    models = {path.stem for path in (tmp_path / "client").glob("*/models/*.py")}
    assert "outline_activity" in models and not any("remaining_type" in m for m in models)


@pytest.mark.processes
def test_openapi_typescript_output_compiles_under_tsc_strict(schema_file, tmp_path):
    tools = {name: NODE_TOOLS / name for name in ("openapi-typescript", "tsc")}
    missing = [name for name, path in tools.items() if not path.exists()]
    if missing or not shutil.which("node"):
        pytest.skip(
            f"no {', '.join(missing) or 'node'} in {NODE_TOOLS} (LMS_NODE_TOOLS): npm install "
            "openapi-typescript@7 typescript@5 there (.ci/run does where npm is available)"
        )
    types = tmp_path / "api.d.ts"
    subprocess.run(
        [str(tools["openapi-typescript"]), str(schema_file), "-o", str(types)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    use = tmp_path / "use.ts"
    use.write_text(
        'import type { components } from "./api";\n'
        'type Code = components["schemas"]["Error"]["error"];\n'
        'export const code: Code = "not_enrolled";\n'
        'export type Remaining = components["schemas"]["Remaining"];\n'
        'type Data = components["schemas"]["RunEvent"]["data"];\n'
        'export const data: Data = {courseId: "c", memberId: "m", email: "e@example.com"};\n'
        'type Settings = components["schemas"]["ActivitySettings"];\n'
        'export const rule: Settings = {completion: {type: "time", minSeconds: 60}};\n'
        'type Create = components["schemas"]["AutomationWriteRequest"];\n'
        'const email = {type: "send_email" as const, '
        'input: {to: "learner", subject: "S", body: ""}};\n'
        'export const aimed: Create = {name: "n", trigger: "activity.completed", '
        'actions: [email], conditions: {courseIds: ["c"], activityIds: ["a"]}};\n'
        # A condition its trigger cannot use does not compile.
        'export const wrong: Create = {name: "n", trigger: "enrollment.created", '
        'actions: [email], conditions: {courseIds: ["c"], // @ts-expect-error\n'
        'activityIds: ["a"]}};\n'
    )
    done = subprocess.run(
        [str(tools["tsc"]), "--strict", "--noEmit", str(types), str(use)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
