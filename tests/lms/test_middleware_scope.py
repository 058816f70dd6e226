"""The admin's middleware (sessions, users, messages) runs outside ``/api/`` only: the API
takes no cookie session, so its requests skip their cost; the admin keeps all of it, and its
CSRF check."""

from __future__ import annotations

import pytest
from django.test import Client

from organizations.models import Membership
from tests.factories import UserFactory
from tests.helpers import make_member

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
