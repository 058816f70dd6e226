"""Each process remembers a bearer token's lookup for LMS_TOKEN_CACHE_SECONDS (1 s): what
the speed must not break. Expiry stays exact; a revocation is refused at once by the process
that revokes and within a second by every other, here two gunicorn workers of two servers."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from organizations.models import ApiToken
from organizations.services import revoke_tokens
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db

URL = "/api/bundles"


@pytest.fixture
def cached(settings):
    settings.LMS_TOKEN_CACHE_SECONDS = 1.0


def _queries(api, learner) -> list:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        assert api.get(URL, token=learner.token).status_code == 200
    return captured.captured_queries


def test_the_second_request_skips_the_token_lookup(api, learner, settings):
    settings.LMS_TOKEN_CACHE_SECONDS = 0
    looked_up = _queries(api, learner)
    settings.LMS_TOKEN_CACHE_SECONDS = 1.0
    _queries(api, learner)  # remembered from here
    remembered = _queries(api, learner)
    assert len(remembered) == len(looked_up) - 1
    assert not any("apitoken" in q["sql"].lower() for q in remembered)


def test_expiry_is_exact_even_when_remembered(api, learner, cached):
    token = ApiToken.all_orgs.get(membership=learner.membership)
    token.expires_at = timezone.now() + timedelta(milliseconds=300)
    token.save()
    assert api.get(URL, token=learner.token).status_code == 200
    time.sleep(0.35)
    body = assert_error(api.get(URL, token=learner.token), 401, "unauthenticated")
    assert "expired" in body["message"]


def test_the_revoking_process_refuses_at_once(api, learner, cached):
    assert api.get(URL, token=learner.token).status_code == 200
    revoke_tokens(ApiToken.all_orgs.filter(membership=learner.membership))
    assert_error(api.get(URL, token=learner.token), 401, "unauthenticated")


def test_other_processes_refuse_within_the_ttl(api, learner, settings):
    """Without a signal between processes: what another process remembered expires."""
    settings.LMS_TOKEN_CACHE_SECONDS = 0.3
    assert api.get(URL, token=learner.token).status_code == 200
    # Revoked behind this process's back, as another process's revoke is.
    ApiToken.all_orgs.filter(membership=learner.membership).update(revoked_at=timezone.now())
    time.sleep(0.35)
    assert_error(api.get(URL, token=learner.token), 401, "unauthenticated")
