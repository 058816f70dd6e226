"""4.6 GET /api/organizations/invites/{token}: public, exact body, 404 / 410, hashed tokens."""

from __future__ import annotations

import logging

import pytest

from organizations.models import Invite, hash_token
from organizations.services import create_invite, reissue_invite, revoke_invite
from tests.factories import OrganizationFactory
from tests.helpers import assert_error
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.django_db

EXPECTED = {"email": "grace.hopper@example.com", "firstName": "Grace", "lastName": "Hopper"}
# The throttle (one upsert), then the one invite query. The first lookup of an address in a
# window also purges stale windows: one more statement, in a savepoint of its own (three).
LOOKUP_QUERIES = 2
PURGE_QUERIES = 3


def invite_url(token: str) -> str:
    return f"/api/organizations/invites/{token}"


@pytest.fixture
def pending(org) -> tuple[Invite, str]:
    return make_invite(org)


def test_pending_invite_answers_exactly_email_and_names(api, pending):
    response = api.get(invite_url(pending[1]))
    assert response.status_code == 200
    assert response.json() == EXPECTED
    assert response["Cache-Control"] == "no-store"


def test_the_body_is_the_invite_serializers(api, org):
    """The lookup builds its body with the invite's ``Shape``, not a serializer per
    request: the same body as ``InviteSerializer``, names with any text included."""
    from organizations.serializers import InviteSerializer

    invite, raw = make_invite(
        org, first_name="Ünï \u2028 cødé", last_name="O'Brien", email="a@b.example"
    )
    response = api.get(invite_url(raw))
    assert response.status_code == 200
    assert response.json() == InviteSerializer(invite).data
    assert response.json()["firstName"] == "Ünï \u2028 cødé"


@pytest.mark.parametrize(
    "authorization",
    ["valid", "Bearer lms_not-a-real-token", "Bearer", "Basic dXNlcjpwYXNz", "Bearer " + "x" * 300],
)
def test_any_authorization_header_is_ignored(api, pending, learner, authorization):
    header = f"Bearer {learner.token}" if authorization == "valid" else authorization
    response = api.get(invite_url(pending[1]), headers={"Authorization": header})
    assert (response.status_code, response.json()) == (200, EXPECTED)
    assert "WWW-Authenticate" not in response


def test_a_member_of_another_organization_reads_it_the_same(api, pending, other_owner):
    response = api.get(invite_url(pending[1]), token=other_owner.token)
    assert (response.status_code, response.json()) == (200, EXPECTED)


def test_query_count_is_pinned_and_does_not_grow_with_invites(
    api, org, pending, django_assert_num_queries
):
    api.get(invite_url(pending[1]))  # the address's first lookup in the window
    with django_assert_num_queries(LOOKUP_QUERIES):
        assert api.get(invite_url(pending[1])).status_code == 200
    for n in range(30):
        make_invite(OrganizationFactory(), email=f"someone{n}@example.com")
    with django_assert_num_queries(LOOKUP_QUERIES):
        assert api.get(invite_url(pending[1])).status_code == 200


def test_first_lookup_of_an_address_purges_stale_windows(api, pending, django_assert_num_queries):
    with django_assert_num_queries(LOOKUP_QUERIES + PURGE_QUERIES):
        assert api.get(invite_url(pending[1])).status_code == 200


def test_unknown_token_is_404(api, pending):
    body = assert_error(api.get(invite_url("inv_" + "A" * 43)), 404, "not_found")
    assert body["message"] == "No invite with that token."


@pytest.mark.parametrize(
    "token",
    [
        "x" * 10_000,
        "%E2%9C%93%F0%9F%98%80",  # unicode
        "inv_caf%C3%A9",
        "%ED%A0%80",  # an encoded lone surrogate
        "%00",
        "%25",
        "..",
        "...",
        "a.b.c",
        "a%2Fb",
        "a/b",
        "%ZZ",
        "inv_" + "%20" * 50,
        "'; DROP TABLE organizations_invite; --",
    ],
)
def test_odd_tokens_are_404_never_an_error(api, pending, token):
    assert_error(api.get(invite_url(token)), 404, "not_found")


def test_an_absurdly_long_token_is_not_even_looked_up(api, pending, django_assert_num_queries):
    api.get(invite_url("warm-up"))
    with django_assert_num_queries(LOOKUP_QUERIES - 1):
        assert_error(api.get(invite_url("x" * 10_000)), 404, "not_found")


def test_a_token_differing_in_one_character_is_404(api, pending):
    raw = pending[1]
    changed = raw[:-1] + ("A" if raw[-1] != "A" else "B")
    assert_error(api.get(invite_url(changed)), 404, "not_found")
    assert_error(
        api.get(invite_url(raw.upper() if raw != raw.upper() else raw.lower())), 404, "not_found"
    )


def test_empty_token_is_an_unknown_route(api):
    assert_error(api.get("/api/organizations/invites/"), 404, "not_found")


@pytest.mark.parametrize(
    "status, message",
    [
        ("accepted", "This invite has already been accepted."),
        ("revoked", "This invite has been revoked."),
        ("expired", "This invite has expired."),
    ],
)
def test_unavailable_invites_are_410(api, org, status, message):
    _, raw = make_invite(org, status)
    body = assert_error(api.get(invite_url(raw)), 410, "invite_unavailable")
    assert body["message"] == message


def test_unavailable_even_with_a_valid_bearer_token(api, org, owner):
    _, raw = make_invite(org, "revoked")
    assert_error(api.get(invite_url(raw), token=owner.token), 410, "invite_unavailable")


def test_revoking_makes_the_token_unavailable(api, pending):
    invite, raw = pending
    assert revoke_invite(invite=invite) is True
    assert_error(api.get(invite_url(raw)), 410, "invite_unavailable")


def test_reissuing_replaces_the_token(api, pending):
    invite, old = pending
    _, new = reissue_invite(invite=invite)
    assert new != old
    assert_error(api.get(invite_url(old)), 404, "not_found")
    assert (api.get(invite_url(new)).json()) == EXPECTED


def test_reissuing_revives_a_revoked_or_expired_invite(api, org):
    for status in ("revoked", "expired"):
        invite, _ = make_invite(org, status, email=f"{status}@example.com")
        _, raw = reissue_invite(invite=invite)
        assert api.get(invite_url(raw)).status_code == 200


def test_tokens_are_stored_only_as_a_hash(org):
    invite, raw = create_invite(
        org=org, email="ada@example.com", first_name="Ada", last_name="Lovelace"
    )
    stored = Invite.all_orgs.get(pk=invite.pk)
    every_value = " ".join(str(value) for value in vars(stored).values())
    assert raw not in every_value
    assert raw[4:] not in every_value  # nor its random part without the prefix
    assert stored.token_hash == hash_token(raw)
    assert raw.startswith("inv_") and len(raw) >= 4 + 43  # 32 random bytes, url-safe base64
    assert raw.startswith(stored.token_prefix) and len(stored.token_prefix) == 12


def test_two_invites_never_share_a_token(org):
    tokens = {make_invite(org, email=f"p{n}@example.com")[1] for n in range(20)}
    assert len(tokens) == 20


def test_the_access_log_does_not_keep_the_token(api, pending, caplog):
    invite, raw = pending
    with caplog.at_level(logging.INFO, logger="lms.access"):
        api.get(invite_url(raw))
    lines = [r for r in caplog.records if r.name == "lms.access"]
    assert lines and all(raw not in r.getMessage() and raw not in r.path for r in lines)
    assert invite.token_prefix in lines[-1].path


def test_the_schema_documents_the_lookup_as_public_with_410_and_429(api):
    schema = api.get("/api/schema/", query={"format": "json"}).json()
    operation = schema["paths"]["/api/organizations/invites/{token}"]["get"]
    assert {"200", "404", "410", "429"} <= set(operation["responses"])
    assert "401" not in operation["responses"] and "403" not in operation["responses"]
    body = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    invite = schema["components"]["schemas"][body.rsplit("/", 1)[1]]
    assert set(invite["properties"]) == {"email", "firstName", "lastName"}
    assert operation.get("security") in (None, [], [{}])  # no bearerAuth
