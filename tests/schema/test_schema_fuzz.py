"""Fuzzing every operation of our own OpenAPI schema with schemathesis.

The schema is loaded from the WSGI app itself (``/api/schema/?format=json``), so every
operation a view documents is fuzzed as soon as its route exists, with no list to keep up to
date here; ``test_every_api_route_is_in_the_schema`` makes sure no route escapes the schema.
Each case goes through the whole stack in-process (middleware, auth, views, the test
database) and is held to all of schemathesis's default checks: no 5xx, the response
conforms to the schema, status codes, content types and headers are documented, invalid
input is rejected, valid input is accepted, and an operation that declares authentication
refuses a request without it.

Requests carry a demo token from ``seed_demo --json`` (the learner's for /api/learn/, where
the learner is enrolled; the owner's elsewhere, who may call everything else), and about
every second case has its ids swapped for ids of demo records, so the fuzzer reaches past
the 404 into the operation itself.

``LMS_FUZZ_EXAMPLES`` (default 50) bounds the random examples per operation, on top of the
examples and coverage cases schemathesis derives from the schema.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import zlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.core.management import call_command
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test.utils import override_settings
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig
from schemathesis.core.failures import FailureGroup
from schemathesis.core.parameters import ParameterLocation

from automations.registry import MAX_INPUT_BYTES, json_size
from tests.schema import fuzz_stats

SCHEMA_PATH = "/api/schema/?format=json"
CONFIG_PATH = Path(__file__).resolve().parents[2] / "schemathesis.toml"
PROBE_URLCONF = "tests.schema.fuzz_probe_urls"
MAX_EXAMPLES = int(os.environ.get("LMS_FUZZ_EXAMPLES", "50"))
# Routes that serve the documentation rather than the API.
NOT_OPERATIONS = {"/api/schema/", "/api/docs/", "/api/docs/guide"}

FUZZ = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    # The demo data set is seeded once per operation and shared by its examples on purpose.
    suppress_health_check=list(HealthCheck),
)


def load_schema(urlconf: str | None = None):
    app = get_wsgi_application()
    config = SchemathesisConfig.from_path(CONFIG_PATH)
    if urlconf is None:
        return schemathesis.openapi.from_wsgi(SCHEMA_PATH, app, config=config)
    with override_settings(ROOT_URLCONF=urlconf):
        return schemathesis.openapi.from_wsgi(SCHEMA_PATH, app, config=config)


API_SCHEMA = load_schema()
PROBE_SCHEMA = load_schema(PROBE_URLCONF)


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """The WSGI app closes the database connection at the end of each request (Django's
    request_finished signal); inside a test's transaction that would end the test's
    connection. Django's own test client switches this off the same way."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def _room_for_every_created_automation(settings):
    """Every valid create of an operation's examples adds an enabled automation to the one
    demo organization; the limit per trigger (CONTRACT 8.9, a state the schema cannot say,
    like a taken name) has its own tests, and is out of the examples' way here."""
    settings.LMS_AUTOMATIONS_PER_TRIGGER = 1_000_000


@pytest.fixture
def demo(db) -> dict[str, Any]:
    out = io.StringIO()
    call_command("seed_demo", "--json", stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue())


# --- what each case sends ------------------------------------------------------------------


def role_for(path: str) -> str:
    return "learner" if path.startswith("/api/learn/") else "owner"


def requires_auth(operation) -> bool:
    security = operation.definition.raw.get("security", API_SCHEMA.raw_schema.get("security"))
    return any(requirement for requirement in security or [])


def known_values(manifest: dict[str, Any]) -> dict[str, list[str]]:
    """Ids of demo records of the caller's organization, by parameter or body field."""
    org = manifest.get("org", {})
    courses = org.get("courses") or []
    return {
        key: [value for value in values if value]
        for key, values in {
            "downloadid": org.get("downloads") or [],
            "assetid": org.get("assets") or [],
            "courseid": [course.get("id") for course in courses],
            "activity": [a for course in courses[:1] for a in course.get("published") or []],
            "activityid": [a for course in courses[:1] for a in course.get("published") or []],
            "token": list((org.get("invites") or {}).values()),
            "automationid": org.get("automations") or [],
        }.items()
    }


def value_key(path: str, name: str) -> str:
    """``downloadId``/``download_id`` -> ``downloadid``; a bare ``{id}`` is named after the
    collection before it (``/api/automations/{id}`` -> ``automationid``)."""
    key = name.replace("_", "").lower()
    if key in {"id", "pk"}:
        before = re.search(r"/([a-z]+?)s?/\{" + re.escape(name) + r"\}", path)
        key = f"{before.group(1)}id" if before else key
    return key


def use_known_ids(case, manifest: dict[str, Any]) -> None:
    """For about every second case, swap generated ids (path parameters and top-level body
    fields) for ids of demo records, where the case is meant to be valid there. The choice
    follows from the generated values, so Hypothesis replays a failing case exactly."""
    body = getattr(case, "body", None)
    turn = zlib.crc32(repr((sorted((case.path_parameters or {}).items()), body)).encode())
    if turn % 2:
        return
    known = known_values(manifest)
    meta = case.meta
    path = case.operation.path
    if case.path_parameters and not (meta and meta.is_negative_at(ParameterLocation.PATH)):
        for name in list(case.path_parameters):
            values = known.get(value_key(path, name))
            if values:
                case.path_parameters[name] = values[turn // 2 % len(values)]
    if isinstance(body, dict) and not (meta and meta.is_negative_at(ParameterLocation.BODY)):
        for name in list(body):
            values = known.get(value_key(path, name))
            if values and isinstance(body[name], str):
                body[name] = values[turn // 2 % len(values)]


def keep_cross_field_rules(case) -> None:
    """A schema cannot say "from <= to <= duration" (nor page <= pages, score <= maxScore);
    the operation's descriptions do. Cases meant to be valid get those rules kept, so that
    the positive-data check holds the operation to the rest of its schema; negative cases
    are left as generated."""
    body = getattr(case, "body", None)
    meta = case.meta
    if not isinstance(body, dict) or (meta and meta.is_negative_at(ParameterLocation.BODY)):
        return
    for report in body.get("reports") or []:
        if not isinstance(report, dict):
            continue
        kind = report.get("type")
        if kind == "media" and all(k in report for k in ("from", "to", "duration")):
            report["from"], report["to"] = sorted((report["from"], report["to"]))
            report["duration"] = max(report["duration"], report["to"])
        elif kind == "page" and "page" in report and "pages" in report:
            report["pages"] = max(report["page"], report["pages"])
        elif kind == "score" and "score" in report and "maxScore" in report:
            report["maxScore"] = max(report["score"], report["maxScore"])


_AUTOMATION_NUMBERS = itertools.count(1)


def keep_automation_rules(case, manifest: dict[str, Any]) -> None:
    """What an automation's schema cannot say: its name is unique in the organization, a
    course is one of the organization's, a change without its trigger is judged by the
    stored one (so it addresses no "inviter", and a PATCH of the trigger alone is checked
    against the stored actions), a URL or
    an e-mail address is one Django's validators take, and an input is at most 16 KiB of
    JSON in all (CONTRACT 8.9). Cases meant to be valid keep them."""
    body = getattr(case, "body", None)
    meta = case.meta
    if not case.operation.path.startswith("/api/automations") or not isinstance(body, dict):
        return
    if meta and meta.is_negative_at(ParameterLocation.BODY):
        return
    if isinstance(body.get("name"), str):
        body["name"] = f"{body['name'][:180]} #{next(_AUTOMATION_NUMBERS)}"
    if case.method.upper() == "PATCH" and "actions" not in body:
        body.pop("trigger", None)
    courses = [course["id"] for course in manifest.get("org", {}).get("courses") or []]
    keep_condition_rules(case, body, manifest)
    for action in body.get("actions") or []:
        data = action.get("input") if isinstance(action, dict) else None
        if not isinstance(data, dict):
            continue
        if "url" in data:
            data["url"] = "https://hooks.example.com/fuzz"
        if isinstance(data.get("headers"), dict):
            data["headers"] = {
                re.sub(r"[^A-Za-z0-9-]", "", name)[:100] or "X-Fuzz": value
                for name, value in data["headers"].items()
            }
        if "courseId" in data and courses:
            data["courseId"] = courses[0]
        if "to" in data:
            # The schema gives "inviter" to invite.accepted's shape only; a change without
            # its trigger is judged by the stored one (unknown here).
            if data["to"] == "inviter" and "trigger" not in body:
                data["to"] = "learner"
            if data["to"] not in ("learner", "inviter"):
                data["to"] = "someone@example.com"
        while json_size(data) > MAX_INPUT_BYTES:
            headers = data.get("headers")
            if isinstance(headers, dict) and len(headers) > 1:
                data["headers"] = dict(list(headers.items())[: len(headers) // 2])
                continue
            texts = [key for key, value in data.items() if isinstance(value, str)]
            longest = max(texts, key=lambda key: len(data[key]))
            data[longest] = data[longest][: len(data[longest]) // 2]


def keep_condition_rules(case, body: dict, manifest: dict[str, Any]) -> None:
    """Conditions (CONTRACT 8.7) name the organization's courses and activities (the
    schema gives each trigger's body only the keys it takes). A PATCH that sends the
    trigger without the conditions, or the conditions without the trigger, is judged by
    the stored other (unknown here): it sends none (`{}`) instead."""
    if case.method.upper() == "PATCH" and ("trigger" in body) != ("conditions" in body):
        body["conditions"] = {}
        return
    conditions = body.get("conditions")
    if not isinstance(conditions, dict):
        return
    courses = manifest.get("org", {}).get("courses") or []
    known = {
        "courseIds": [course["id"] for course in courses],
        "activityIds": [a for course in courses[:1] for a in course.get("published") or []],
    }
    for key in list(conditions):
        ids = conditions[key]
        if not known.get(key):
            del conditions[key]
        elif isinstance(ids, list):
            conditions[key] = [known[key][n % len(known[key])] for n in range(len(ids))]


def keep_invite_rules(case, manifest: dict[str, Any]) -> None:
    """What an invite's schema cannot say (CONTRACT 9.2): `expiresAt` within the next 90
    days, and `courseIds` courses of the organization, each once."""
    body = getattr(case, "body", None)
    meta = case.meta
    if case.operation.path != "/api/organizations/invites" or case.method.upper() != "POST":
        return
    if not isinstance(body, dict) or (meta and meta.is_negative_at(ParameterLocation.BODY)):
        return
    if "expiresAt" in body:
        body["expiresAt"] = (timezone.now() + timedelta(days=1)).isoformat()
    if isinstance(body.get("courseIds"), list):
        courses = known_values(manifest).get("courseid", [])
        body["courseIds"] = courses[: len(body["courseIds"])]


@pytest.fixture(autouse=True)
def _invites_can_be_mailed(settings):
    """`sendEmail: true` is valid where the server has an accept link to send (the mail
    waits for a commit the tests' transactions never make)."""
    settings.LMS_INVITE_URL = "https://learn.example.com/join/{token}"


def run_case(run: str, case, manifest: dict[str, Any]) -> None:
    fuzz_stats.cases[f"{run}: {case.operation.label}"] += 1
    use_known_ids(case, manifest)
    keep_cross_field_rules(case)
    keep_automation_rules(case, manifest)
    keep_invite_rules(case, manifest)
    headers = {}
    meta = case.meta
    negative_headers = bool(meta and meta.is_negative_at(ParameterLocation.HEADER))
    # A case made invalid in its headers may be the one without Authorization: sending our
    # token would make it valid again, so it goes as generated (and must be refused).
    if requires_auth(case.operation) and not negative_headers:
        token = manifest["org"]["tokens"][role_for(case.operation.path)]
        headers["Authorization"] = f"Bearer {token}"
    case.call_and_validate(headers=headers)


# --- the seven operations (and whatever else the schema lists) ------------------------------

if len(API_SCHEMA):

    @API_SCHEMA.parametrize()
    @FUZZ
    def test_every_operation_holds_the_contract(case, demo):
        run_case("api", case, demo)

else:

    def test_every_operation_holds_the_contract():
        pytest.skip("the schema lists no API operation yet; each is fuzzed once it is routed")


def api_routes(patterns=None, prefix: str = "/") -> set[str]:
    """Every routed path under /api/, spelled as OpenAPI does (``{name}`` parameters)."""
    routes: set[str] = set()
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(entry.pattern))
        if isinstance(entry, URLResolver):
            routes |= api_routes(entry.url_patterns, prefix + route)
        elif isinstance(entry, URLPattern) and (prefix + route).startswith("/api/"):
            routes.add(prefix + route)
    return routes - NOT_OPERATIONS


def test_every_api_route_is_in_the_schema():
    """A route the schema does not list would never be fuzzed (nor documented)."""
    assert api_routes() <= set(API_SCHEMA.raw_schema.get("paths", {}))


def test_schema_is_a_valid_openapi_document():
    API_SCHEMA.validate()
    PROBE_SCHEMA.validate()


# --- the shared machinery, on probe routes (see fuzz_probe_urls) ----------------------------

PROBES = PROBE_SCHEMA.exclude(path="/probe/boom")


@pytest.mark.urls(PROBE_URLCONF)
@PROBES.parametrize()
@FUZZ
def test_shared_machinery_holds_the_contract(case, demo):
    run_case("probe", case, demo)


@pytest.mark.urls(PROBE_URLCONF)
def test_the_harness_catches_a_server_error(demo):
    case = PROBE_SCHEMA["/probe/boom"]["GET"].Case()
    with pytest.raises(FailureGroup) as failure:
        run_case("probe", case, demo)
    assert "Server error" in str(failure.value)
