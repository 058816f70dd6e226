"""Bearer tokens: 401 for every kind of bad token, hashed at rest, scoped to one org."""

from datetime import timedelta

import pytest
from django.utils import timezone

from organizations.models import ApiToken, hash_token
from tests.helpers import assert_error, assert_foreign_looks_missing, make_member

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.lms.probe_urls")]
MISSING = "00000000-0000-7000-8000-000000000000"


def member_url(membership_id) -> str:
    return f"/probe/members/{membership_id}"


def assert_unauthenticated(response):
    assert_error(response, 401, "unauthenticated")
    assert response["WWW-Authenticate"] == "Bearer"


def test_valid_token_reaches_its_organization(api, learner):
    response = api.get(member_url(learner.membership.id), token=learner.token)
    assert response.status_code == 200
    assert response.json() == {"id": str(learner.membership.id), "role": "learner"}


def test_missing_token_is_401(api, learner):
    assert_unauthenticated(api.get(member_url(learner.membership.id)))


def test_unknown_token_is_401(api, learner):
    assert_unauthenticated(api.get(member_url(learner.membership.id), token="lms_" + "x" * 43))


@pytest.mark.parametrize(
    "header", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer a b", "Token abc", "Bearer " + "x" * 300]
)
def test_malformed_authorization_header_is_401(api, learner, header):
    response = api.get(member_url(learner.membership.id), headers={"Authorization": header})
    assert_unauthenticated(response)


def test_revoked_token_is_401(api, learner):
    ApiToken.all_orgs.filter(membership=learner.membership).update(revoked_at=timezone.now())
    assert_unauthenticated(api.get(member_url(learner.membership.id), token=learner.token))


def test_expired_token_is_401(api, learner):
    ApiToken.all_orgs.filter(membership=learner.membership).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert_unauthenticated(api.get(member_url(learner.membership.id), token=learner.token))


def test_token_with_future_expiry_works(api, learner):
    ApiToken.all_orgs.filter(membership=learner.membership).update(
        expires_at=timezone.now() + timedelta(days=1)
    )
    assert api.get(member_url(learner.membership.id), token=learner.token).status_code == 200


def test_token_of_deactivated_user_is_401(api, learner):
    learner.user.is_active = False
    learner.user.save()
    assert_unauthenticated(api.get(member_url(learner.membership.id), token=learner.token))


def test_tokens_are_stored_only_as_a_hash(learner):
    stored = ApiToken.all_orgs.get(membership=learner.membership)
    every_value = " ".join(str(v) for v in vars(stored).values())
    assert learner.token not in every_value
    assert stored.key_hash == hash_token(learner.token)
    assert len(learner.token) >= 43  # 32 random bytes, url-safe base64
    assert learner.token.startswith(stored.prefix)


def test_two_tokens_are_different(org):
    a, b = make_member(org), make_member(org)
    assert a.token != b.token


def test_another_organizations_record_looks_missing(api, learner, other_owner):
    assert_foreign_looks_missing(
        api,
        "GET",
        member_url(other_owner.membership.id),
        member_url(MISSING),
        token=learner.token,
    )


def test_token_of_other_org_does_not_see_this_org(api, learner, other_owner):
    response = api.get(member_url(learner.membership.id), token=other_owner.token)
    assert_error(response, 404, "not_found")


@pytest.mark.parametrize("bad_id", ["not-a-uuid", "1", "0000", "%00", "..", "a" * 300])
def test_malformed_id_in_path_is_404(api, learner, bad_id):
    assert_error(api.get(f"/probe/members/{bad_id}", token=learner.token), 404, "not_found")


def test_checks_run_authentication_before_role(api):
    assert_unauthenticated(api.get("/probe/owners-only"))
