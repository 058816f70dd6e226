"""What API tests share: a JSON client that sends bearer tokens, members with tokens, and
the contract checks every endpoint's tests call (error body, tenant isolation)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.client import ClientHandler

from lms.web.chains import ApiChain
from organizations.models import Membership, Organization
from organizations.services import create_api_token
from tests.factories import MembershipFactory


@dataclass
class Member:
    """A membership with a live API token, as a client would hold it."""

    membership: Membership
    token: str

    @property
    def org(self) -> Organization:
        return self.membership.org

    @property
    def user(self):
        return self.membership.user


def make_member(org: Organization, role: str = Membership.Role.LEARNER, **kwargs) -> Member:
    membership = MembershipFactory(org=org, role=role, **kwargs)
    _, raw = create_api_token(membership=membership, name="test")
    return Member(membership=membership, token=raw)


def org_fixture(make: Callable[..., Any], of: str = "org", **options: Any):
    """A fixture: ``make(org=..., **options)`` for the organization of the fixture ``of``."""

    @pytest.fixture
    def record(request):
        return make(org=request.getfixturevalue(of), **options)

    return record


class ChainedClientHandler(ApiChain, ClientHandler):
    """The test client's handler with the WSGI application's two chains (lms.web.chains)."""


class ChainedClient(Client):
    """Django's test client whose requests take the chains that the WSGI application's do."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.handler = ChainedClientHandler(self.handler.enforce_csrf_checks)


class ApiClient:
    """Django's test client speaking JSON with ``Authorization: Bearer``.

    Requests run through the whole stack (middleware, routing, auth, the views), as a
    client's would, by the way the WSGI application sends them; only the socket is skipped.
    """

    def __init__(self) -> None:
        self.client = ChainedClient(raise_request_exception=False)

    def request(
        self,
        method: str,
        url: str,
        data: Any = None,
        *,
        token: str | None = None,
        raw: bytes | str | None = None,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        query: dict[str, Any] | None = None,
    ):
        extra_headers = dict(headers or {})
        if token is not None:
            extra_headers["Authorization"] = f"Bearer {token}"
        body = raw if raw is not None else (json.dumps(data) if data is not None else "")
        return self.client.generic(
            method.upper(),
            url,
            body,
            content_type=content_type,
            headers=extra_headers,
            QUERY_STRING=_query_string(query),
        )

    def get(self, url: str, **kwargs):
        return self.request("GET", url, **kwargs)

    def post(self, url: str, data: Any = None, **kwargs):
        return self.request("POST", url, data, **kwargs)

    def delete(self, url: str, **kwargs):
        return self.request("DELETE", url, **kwargs)


def at_once(calls: list[Callable[[ApiClient], Any]]) -> list:
    """Run each call with its own client in its own thread (so on its own database
    connection), released together at a barrier; their results in order."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(index: int) -> None:
        try:
            client = ApiClient()
            barrier.wait(timeout=30)
            results[index] = calls[index](client)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def _query_string(query: dict[str, Any] | None) -> str:
    if not query:
        return ""
    from urllib.parse import urlencode

    return urlencode(query, doseq=True)


def prepared_statements(like: str = "%") -> list[tuple[str, int]]:
    """This connection's prepared statements whose text is ``LIKE like`` (PostgreSQL): each
    one's text and how often it ran."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE %s",
            [like],
        )
        return cursor.fetchall()


def assert_error(response, status: int, code: str) -> dict:
    """The contract's error body: exactly {error, message, requestId[, details]}."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = response.json()
    assert body["error"] == code, body
    assert isinstance(body["message"], str) and body["message"], body
    assert body["requestId"] == response["X-Request-ID"], body
    allowed = {"error", "message", "requestId"} | (
        {"details"} if code in ("validation_error", "conflict") else set()
    )
    assert set(body) <= allowed and {"error", "message", "requestId"} <= set(body), body
    if code == "validation_error":
        assert isinstance(body["details"], dict) and body["details"], body
    assert b"Traceback" not in response.content
    return body


def assert_foreign_looks_missing(
    api: ApiClient,
    method: str,
    foreign_url: str,
    missing_url: str,
    *,
    token: str,
    data: Any = None,
) -> None:
    """Tenant isolation: another organization's record answers exactly like a record that
    does not exist (404 ``not_found``, same message), never 403 and never its data."""
    foreign = api.request(method, foreign_url, data, token=token)
    missing = api.request(method, missing_url, data, token=token)
    foreign_body = assert_error(foreign, 404, "not_found")
    missing_body = assert_error(missing, 404, "not_found")
    assert foreign_body["message"] == missing_body["message"]


def admin_client(org: Organization | None = None, role: str = Membership.Role.OWNER) -> Client:
    """A test client signed in to the admin: as a staff ``role`` member of ``org``, or as a
    superuser without one."""
    from tests.factories import UserFactory

    if org is None:
        user = UserFactory(is_staff=True, is_superuser=True)
    else:
        user = UserFactory(is_staff=True)
        make_member(org, role, user=user)
    client = Client()
    client.force_login(user)
    return client
