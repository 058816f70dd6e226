"""The admin's middleware (static files, sessions, CSRF, users, messages, the sign-in
lockout) runs outside ``/api/`` only: the API takes no cookie session, so its requests skip
their cost (lms.web.chains); the admin keeps all of it, and its CSRF check."""

from __future__ import annotations

import pytest
from django.test import Client

from lms.web.chains import api_middleware
from organizations.models import Membership
from tests.factories import UserFactory
from tests.helpers import ChainedClient, make_member

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(org) -> Client:
    user = UserFactory(is_staff=True, email="staff-admin@example.com")
    make_member(org, Membership.Role.ADMIN, user=user)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def test_an_api_request_skips_the_admin_middleware_even_with_a_session_cookie(staff_client, org):
    member = make_member(org)
    response = staff_client.get("/api/bundles", headers={"authorization": f"Bearer {member.token}"})
    assert response.status_code == 200
    request = response.wsgi_request
    assert not hasattr(request, "session")  # (DRF sets ``user`` itself, from the token)
    assert not hasattr(request, "_messages")
    assert "Set-Cookie" not in response.headers and "Cookie" not in response.get("Vary", "")


def test_the_api_still_refuses_a_session_without_a_bearer_token(staff_client):
    response = staff_client.get("/api/bundles")
    assert response.status_code == 401
    assert response.json()["error"] == "unauthenticated"


def test_the_admin_keeps_its_session_user_and_csrf_check(staff_client):
    page = staff_client.get("/admin/")
    assert page.status_code == 200
    assert page.wsgi_request.user.is_staff and page.wsgi_request.session.session_key
    # A form posted without its CSRF token is refused: the check still runs for the admin.
    assert staff_client.post("/admin/logout/").status_code == 403
    token = staff_client.get("/admin/").wsgi_request.META["CSRF_COOKIE"]
    assert staff_client.post("/admin/logout/", {"csrfmiddlewaretoken": token}).status_code in (
        200,
        302,
    )
    assert staff_client.get("/admin/").status_code == 302  # signed out: to the sign-in page


# --- The API's own chain (lms.web.chains) ----------------------------------------------------

SEEN: list[str] = []


class Recorder:
    """A middleware that notes the path of each request it sees."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        SEEN.append(request.path)
        return self.get_response(request)


RECORDER = f"{__name__}.Recorder"


@pytest.fixture
def recorded(settings):
    """The recorder in MIDDLEWARE, as one of the admin's middleware."""
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, RECORDER]
    settings.LMS_OUTSIDE_API_MIDDLEWARE = [*settings.LMS_OUTSIDE_API_MIDDLEWARE, RECORDER]
    SEEN.clear()
    yield SEEN
    SEEN.clear()


def test_an_api_request_passes_none_of_the_admins_middleware(recorded, org):
    client = ChainedClient()
    member = make_member(org)
    assert (
        client.get("/api/bundles", headers={"authorization": f"Bearer {member.token}"}).status_code
        == 200
    )
    assert client.get("/api/no-such-thing").status_code == 404
    assert client.get("/admin/login/").status_code == 200
    assert recorded == ["/admin/login/"]


def test_with_the_switch_off_every_request_passes_the_whole_chain(recorded, settings, org):
    settings.LMS_API_CHAIN = False
    client = ChainedClient()
    member = make_member(org)
    client.get("/api/bundles", headers={"authorization": f"Bearer {member.token}"})
    client.get("/admin/login/")
    assert recorded == ["/api/bundles", "/admin/login/"]


def test_the_admins_middleware_is_named_as_in_middleware(settings):
    """A renamed or removed middleware must be renamed here too, or the API would pass it."""
    assert set(settings.LMS_OUTSIDE_API_MIDDLEWARE) <= set(settings.MIDDLEWARE)
    assert api_middleware() == [
        name for name in settings.MIDDLEWARE if name not in settings.LMS_OUTSIDE_API_MIDDLEWARE
    ]


def _answers(client: Client, requests: list[tuple[str, str, dict, str]]) -> list[tuple]:
    answered = []
    for method, path, headers, body in requests:
        response = client.generic(
            method, path, body, content_type="application/json", headers=headers
        )
        kept = {k: v for k, v in response.items() if k not in {"X-Request-ID", "Date"}}
        # An error body names its request's id: the one thing that differs between two asks.
        body = response.content.replace(response["X-Request-ID"].encode(), b"<request id>")
        answered.append((response.status_code, kept, body))
    return answered


def test_the_api_answers_the_same_by_either_chain(settings, org):
    """Statuses, headers and bodies, for answers and refusals alike: what the admin's
    middleware would add to an API answer, nothing does (Content-Length, the security
    headers and X-Frame-Options come from middleware the API keeps)."""
    settings.CORS_ALLOWED_ORIGINS = ["http://127.0.0.2:5173"]
    bearer = {"authorization": f"Bearer {make_member(org, Membership.Role.OWNER).token}"}
    requests = [
        ("GET", "/api/bundles", bearer, ""),
        ("GET", "/api/automations", {**bearer, "origin": "http://127.0.0.2:5173"}, ""),
        ("GET", "/api/bundles", {}, ""),
        ("GET", "/api/no-such-thing", bearer, ""),
        ("DELETE", "/api/bundles", bearer, ""),
        ("POST", "/api/automations", bearer, "{not json"),
        (
            "POST",
            "/api/automations",
            {**bearer, "content-type": "application/json; charset=latin-1"},
            "{}",
        ),
        ("POST", "/api/docs/guide", {}, ""),
        ("GET", "/api/bundles", {**bearer, "host": "evil.example"}, ""),
        (
            "OPTIONS",
            "/api/bundles",
            {"origin": "http://127.0.0.2:5173", "access-control-request-method": "GET"},
            "",
        ),
    ]
    chained = _answers(ChainedClient(), requests)
    settings.LMS_API_CHAIN = False
    assert _answers(ChainedClient(), requests) == chained
    statuses = [status for status, _, _ in chained]
    assert statuses == [200, 200, 401, 404, 405, 400, 415, 405, 400, 200]
    answer = chained[0][1]
    assert answer["X-Frame-Options"] == "DENY" and answer["X-Content-Type-Options"] == "nosniff"
    assert int(answer["Content-Length"]) == len(chained[0][2])
