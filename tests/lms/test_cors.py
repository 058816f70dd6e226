"""8.6 Browsers: CORS for the origins of LMS_CORS_ORIGINS, on the API only, without
credentials. A preflight from a listed origin needs no token; anything else is answered as
before, without a CORS header."""

from __future__ import annotations

import json

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from tests.helpers import assert_error
from tests.learn.factories import ActivityFactory, CourseFactory, EnrollmentFactory
from tests.organizations.servers import base_env, run_django

pytestmark = pytest.mark.django_db

FRONT = "http://127.0.0.2:5173"
OTHER = "http://127.0.0.3:5173"
ID = "0190c3a2-7b1e-7c3d-9f00-2a5b6c7d8e9f"


@pytest.fixture(autouse=True)
def _front_end_listed(settings):
    """What LMS_CORS_ORIGINS=http://127.0.0.2:5173 sets (test_the_setting_comes_from_...)."""
    settings.CORS_ALLOWED_ORIGINS = [FRONT]


def preflight(api, url: str, origin: str = FRONT, method: str = "GET", headers: str = ""):
    sent = {"Origin": origin, "Access-Control-Request-Method": method}
    if headers:
        sent["Access-Control-Request-Headers"] = headers
    return api.request("OPTIONS", url, headers=sent)


def listed(value: str) -> set[str]:
    return {item.strip().lower() for item in value.split(",")}


@pytest.mark.parametrize(
    ("url", "method"),
    [
        ("/api/bundles", "GET"),
        ("/api/learn/progress", "POST"),
        (f"/api/automations/{ID}", "PATCH"),
        (f"/api/downloads/{ID}/assets/{ID}", "DELETE"),
        ("/api/no-such-route", "GET"),
    ],
)
def test_a_preflight_from_a_listed_origin_is_200_without_a_token(api, url, method):
    response = preflight(api, url, method=method, headers="authorization,content-type")
    assert response.status_code == 200, response.content
    assert response["Access-Control-Allow-Origin"] == FRONT
    assert {"authorization", "content-type", "idempotency-key"} <= listed(
        response["Access-Control-Allow-Headers"]
    )
    assert {"get", "post", "patch", "delete"} <= listed(response["Access-Control-Allow-Methods"])
    assert "Access-Control-Allow-Credentials" not in response
    assert "WWW-Authenticate" not in response
    assert response["X-Request-ID"]


def test_the_allowed_methods_are_every_method_of_the_api(api):
    """A route that takes a method the preflight does not allow could not be called from a
    page: the list is checked against the API's views."""
    allowed = listed(preflight(api, "/api/bundles")["Access-Control-Allow-Methods"])
    methods: set[str] = set()

    def walk(patterns, prefix: str) -> None:
        for entry in patterns:
            route = prefix + str(entry.pattern)
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, route)
            elif isinstance(entry, URLPattern) and route.startswith("api/"):
                view = getattr(entry.callback, "view_class", None) or getattr(
                    entry.callback, "cls", None
                )
                if view is None:
                    continue
                names = {name for name in view.http_method_names if hasattr(view, name)}
                methods.update(names - {"head", "options"})

    walk(get_resolver().url_patterns, "")
    assert {"get", "post", "patch", "delete"} <= methods
    assert methods <= allowed


def test_an_answer_to_a_listed_origin_carries_the_origin_and_exposes_our_headers(api, learner):
    response = api.get("/api/bundles", token=learner.token, headers={"Origin": FRONT})
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == FRONT
    assert {"idempotent-replayed", "x-request-id"} <= listed(
        response["Access-Control-Expose-Headers"]
    )
    assert "Access-Control-Allow-Credentials" not in response
    assert "origin" in listed(response["Vary"])


def test_an_answer_without_origin_says_it_varies_by_origin(api, learner):
    """A cache must not hand a same-origin answer (no CORS header) to a page on a listed
    origin: every API answer varies by Origin while origins are listed."""
    response = api.get("/api/bundles", token=learner.token)
    assert response.status_code == 200
    assert "origin" in listed(response["Vary"])
    assert "Access-Control-Allow-Origin" not in response


def test_an_error_to_a_listed_origin_is_readable_too(api):
    """The page can read why a call failed: 401 (no token), 405 and 404 carry the origin."""
    for method, url, status in [
        ("GET", "/api/bundles", 401),
        ("GET", "/api/no-such-route", 404),
    ]:
        response = api.request(method, url, headers={"Origin": FRONT})
        assert response.status_code == status
        assert response["Access-Control-Allow-Origin"] == FRONT


def test_a_replayed_write_is_readable_as_replayed(api, org, learner):
    course = CourseFactory(org=org)
    activity = ActivityFactory(module__course=course, org=org)
    EnrollmentFactory(course=course, membership=learner.membership)
    headers = {"Origin": FRONT, "Idempotency-Key": "page-retry-1"}
    body = {"activity": str(activity.id), "reports": []}
    first = api.post("/api/learn/progress", body, token=learner.token, headers=headers)
    again = api.post("/api/learn/progress", body, token=learner.token, headers=headers)
    assert first.status_code == again.status_code == 200, first.content
    assert again["Idempotent-Replayed"] == "true"
    assert again["Access-Control-Allow-Origin"] == FRONT
    assert "idempotent-replayed" in listed(again["Access-Control-Expose-Headers"])


def test_an_origin_not_listed_gets_no_cors_header(api, learner):
    refused = preflight(api, "/api/bundles", origin=OTHER, headers="authorization")
    assert not any(name.lower().startswith("access-control-") for name in refused.headers)
    # Not answered as a preflight: it reaches the API as any OPTIONS without a token does.
    assert_error(refused, 401, "unauthenticated")
    read = api.get("/api/bundles", token=learner.token, headers={"Origin": OTHER})
    assert read.status_code == 200
    assert not any(name.lower().startswith("access-control-") for name in read.headers)


@pytest.mark.parametrize(
    "origin",
    [f"{FRONT}/", f"{FRONT}/x", f"{FRONT}#x", f"{FRONT}?x", FRONT.replace("http", "HTTP", 1)],
)
def test_an_origin_that_is_not_exactly_a_listed_one_gets_no_cors_header(api, learner, origin):
    """CONTRACT 8.6: the serialized origin exactly; the library compared its parsed scheme and
    host, and echoed each of these back as allowed."""
    refused = preflight(api, "/api/bundles", origin=origin, headers="authorization")
    assert not any(name.lower().startswith("access-control-") for name in refused.headers)
    assert_error(refused, 401, "unauthenticated")
    read = api.get("/api/bundles", token=learner.token, headers={"Origin": origin})
    assert read.status_code == 200
    assert not any(name.lower().startswith("access-control-") for name in read.headers)


def test_no_origin_is_listed_by_default(api, learner, settings):
    settings.CORS_ALLOWED_ORIGINS = []
    refused = preflight(api, "/api/bundles", headers="authorization")
    assert_error(refused, 401, "unauthenticated")
    read = api.get("/api/bundles", token=learner.token, headers={"Origin": FRONT})
    assert not any(name.lower().startswith("access-control-") for name in read.headers)


@pytest.mark.parametrize("url", ["/admin/", "/admin/login/", "/healthz"])
def test_the_admin_and_other_pages_never_answer_cors(api, url):
    response = preflight(api, url, method="POST")
    assert not any(name.lower().startswith("access-control-") for name in response.headers)
    plain = api.get(url, headers={"Origin": FRONT})
    assert not any(name.lower().startswith("access-control-") for name in plain.headers)


def test_an_options_that_is_no_preflight_keeps_its_answers(api, learner):
    """Without Origin and Access-Control-Request-Method an OPTIONS is answered as before:
    401 without a token, the allowed methods with one; a wrong method stays 405."""
    assert_error(api.request("OPTIONS", "/api/bundles"), 401, "unauthenticated")
    with_origin_only = api.request("OPTIONS", "/api/bundles", headers={"Origin": FRONT})
    assert_error(with_origin_only, 401, "unauthenticated")
    assert with_origin_only["Access-Control-Allow-Origin"] == FRONT
    answered = api.request("OPTIONS", "/api/bundles", token=learner.token)
    assert answered.status_code == 200 and "GET" in answered["Allow"]
    wrong = api.delete("/api/bundles", token=learner.token, headers={"Origin": FRONT})
    assert_error(wrong, 405, "method_not_allowed")
    assert wrong["Access-Control-Allow-Origin"] == FRONT


@pytest.mark.processes
def test_the_setting_comes_from_lms_cors_origins():
    code = (
        "import json; from django.conf import settings; "
        "print(json.dumps([settings.CORS_ALLOWED_ORIGINS, settings.CORS_ALLOW_CREDENTIALS]))"
    )
    env = base_env(LMS_CORS_ORIGINS=f" {FRONT}, https://app.example.com ,")
    assert json.loads(run_django(code, env)) == [[FRONT, "https://app.example.com"], False]
    default = base_env()
    default.pop("LMS_CORS_ORIGINS", None)
    assert json.loads(run_django(code, default)) == [[], False]
