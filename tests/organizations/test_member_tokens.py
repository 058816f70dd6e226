"""9.8: an owner or admin mints an expiring token of a member for a platform's front end
(POST /api/organizations/members/{memberId}/tokens), and any token signs itself out
(DELETE /api/auth/token). Through the test client, and over real HTTP on a live server."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from organizations.models import ApiToken, Membership
from tests.browser.live_api import LiveApi
from tests.helpers import assert_error, assert_foreign_looks_missing, make_member

pytestmark = pytest.mark.django_db

Role = Membership.Role
SIGN_OUT = "/api/auth/token"


def tokens_url(member_id) -> str:
    return f"/api/organizations/members/{member_id}/tokens"


def test_an_admin_mints_a_learners_token_that_acts_as_the_learner(api, admin_member, learner):
    before = timezone.now()
    response = api.post(tokens_url(learner.membership.id), {}, token=admin_member.token)

    assert response.status_code == 201, response.content
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert set(body) == {"token", "memberId", "expiresAt"}
    assert body["memberId"] == str(learner.membership.id)
    expires_at = parse_datetime(body["expiresAt"])
    assert body["expiresAt"].endswith("Z")
    assert before + timedelta(seconds=3600) <= expires_at <= timezone.now() + timedelta(3600)
    stored = ApiToken.all_orgs.get(prefix=body["token"][:12])
    assert (stored.membership_id, stored.expires_at) == (learner.membership.id, expires_at)
    assert body["token"] not in stored.key_hash
    # It is the learner's: a learner may list bundles but may not mint tokens.
    assert api.get("/api/bundles", token=body["token"]).status_code == 200
    denied = api.post(tokens_url(learner.membership.id), {}, token=body["token"])
    assert_error(denied, 403, "permission_denied")


@pytest.mark.parametrize("seconds", [60, 86400, 1234])
def test_expires_in_sets_the_lifetime(api, owner, learner, seconds):
    before = timezone.now()
    body = api.post(
        tokens_url(learner.membership.id), {"expiresIn": seconds}, token=owner.token
    ).json()
    expires_at = parse_datetime(body["expiresAt"])
    assert before + timedelta(seconds=seconds) <= expires_at
    assert expires_at <= timezone.now() + timedelta(seconds=seconds)


@pytest.mark.parametrize("value", [59, 86401, 0, -5, "3600", 3600.0, True, None, [60]])
def test_a_bad_expires_in_is_a_400_naming_it(api, owner, learner, value):
    response = api.post(tokens_url(learner.membership.id), {"expiresIn": value}, token=owner.token)
    assert set(assert_error(response, 400, "validation_error")["details"]) == {"expiresIn"}
    assert not ApiToken.all_orgs.filter(membership=learner.membership).exclude(name="test")


def test_the_token_expires(api, owner, learner):
    body = api.post(tokens_url(learner.membership.id), {"expiresIn": 60}, token=owner.token).json()
    ApiToken.all_orgs.filter(prefix=body["token"][:12]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert_error(api.get("/api/bundles", token=body["token"]), 401, "unauthenticated")


def test_nobody_mints_for_a_role_above_their_own(api, org, admin_member):
    boss = make_member(org, Role.OWNER)
    peer = make_member(org, Role.ADMIN)
    response = api.post(tokens_url(boss.membership.id), {}, token=admin_member.token)
    assert_error(response, 403, "permission_denied")
    assert ApiToken.all_orgs.filter(membership=boss.membership).count() == 1
    assert api.post(tokens_url(peer.membership.id), {}, token=admin_member.token).status_code == 201
    # An owner mints for an owner.
    assert api.post(tokens_url(peer.membership.id), {}, token=boss.token).status_code == 201


@pytest.mark.parametrize("role", [Role.INSTRUCTOR, Role.LEARNER])
def test_other_roles_may_not_mint(api, org, learner, role):
    caller = make_member(org, role)
    response = api.post(tokens_url(learner.membership.id), {}, token=caller.token)
    assert_error(response, 403, "permission_denied")


def test_an_unknown_foreign_or_malformed_member_is_a_404(api, owner, other_owner):
    assert_foreign_looks_missing(
        api,
        "POST",
        tokens_url(other_owner.membership.id),
        tokens_url(uuid.uuid4()),
        token=owner.token,
        data={},
    )
    assert_error(api.post(tokens_url("nope"), {}, token=owner.token), 404, "not_found")


def test_checks_run_in_the_contracts_order(api, learner, owner):
    url = tokens_url(uuid.uuid4())
    assert_error(api.post(url, {}), 401, "unauthenticated")
    assert_error(api.post(url, {"expiresIn": 1}, token=learner.token), 403, "permission_denied")
    assert_error(api.post(url, {"expiresIn": 1}, token=owner.token), 400, "validation_error")
    assert_error(api.post(url, {}, token=owner.token), 404, "not_found")


def test_sign_out_revokes_the_calling_token_and_no_other(api, owner, learner):
    second = api.post(tokens_url(learner.membership.id), {}, token=owner.token).json()["token"]
    response = api.delete(SIGN_OUT, token=second)
    assert response.status_code == 204 and response.content == b""
    body = assert_error(api.get("/api/bundles", token=second), 401, "unauthenticated")
    assert "revoked" in body["message"]
    assert_error(api.delete(SIGN_OUT, token=second), 401, "unauthenticated")
    assert api.get("/api/bundles", token=learner.token).status_code == 200


def test_sign_out_needs_a_token(api):
    assert_error(api.delete(SIGN_OUT), 401, "unauthenticated")
    assert_error(api.delete(SIGN_OUT, token="lms_nope"), 401, "unauthenticated")


def test_sign_out_takes_only_delete(api, learner):
    assert_error(api.post(SIGN_OUT, {}, token=learner.token), 405, "method_not_allowed")


def test_queries_do_not_grow(api, owner, learner, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        assert api.post(tokens_url(learner.membership.id), {}, token=owner.token).status_code == 201
    with django_assert_max_num_queries(4):
        assert api.delete(SIGN_OUT, token=learner.token).status_code == 204


@pytest.mark.django_db(transaction=True)
def test_over_real_http_a_minted_token_works_until_it_signs_out(live_server, org, settings):
    """On the live server, whose process keeps token lookups for a second as deployed: the
    minted token works, signs out, and is refused at once by the server that revoked it
    and, a second later, by any process that remembered it."""
    settings.LMS_TOKEN_CACHE_SECONDS = 1.0
    live = LiveApi(live_server.url)
    owner = make_member(org, Role.OWNER)
    learner = make_member(org, Role.LEARNER)

    minted = live.post(tokens_url(learner.membership.id), {"expiresIn": 600}, token=owner.token)
    assert minted.status == 201, minted.body
    token = minted.json()["token"]
    assert live.get("/api/bundles", token=token).status == 200

    signed_out = live.delete(SIGN_OUT, token=token)
    assert (signed_out.status, signed_out.body) == (204, b"")
    revoked_at = time.monotonic()
    refused = live.get("/api/bundles", token=token)
    assert refused.status == 401 and refused.json()["error"] == "unauthenticated"
    assert refused.headers["www-authenticate"] == "Bearer"
    assert time.monotonic() - revoked_at < 1.0
    assert live.get("/api/bundles", token=learner.token).status == 200
