"""A revoked token answers 401 from every worker within a second, over real HTTP: two
gunicorn servers of two workers each remember the token (LMS_TOKEN_CACHE_SECONDS, 1 s), a
third process revokes it, and from one second later every request to any worker is 401."""

from __future__ import annotations

import json
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from harness.servers import base_env, fetch, gunicorn_servers, run_django

pytestmark = pytest.mark.processes

SETUP = """
import json
from django.core.management import call_command
from organizations.models import Organization
from organizations.services import add_member, create_api_token
call_command("migrate", verbosity=0)
call_command("createcachetable")
org = Organization.objects.create(name="Revocation Academy")
member = add_member(org=org, email="learner@example.com", role="learner")
_, raw = create_api_token(membership=member)
print(json.dumps({"token": raw}))
"""

REVOKE = """
from organizations.models import ApiToken
from organizations.services import revoke_tokens
print(revoke_tokens(ApiToken.all_orgs.all()))
"""


def ask_everyone(servers: list[str], token: str, rounds: int = 24) -> list[int]:
    """Many requests at once to every server, so that every worker answers some."""
    urls = [servers[n % len(servers)] + "/api/bundles" for n in range(rounds)]
    headers = {"Authorization": f"Bearer {token}"}
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda url: fetch(url, headers)[0], urls))


def test_a_revoked_token_is_refused_by_every_worker_within_a_second(tmp_path):
    env = base_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        LMS_VAR_DIR=str(tmp_path),
        LMS_THREADS="4",
        LMS_TOKEN_CACHE_SECONDS="1",
    )
    token = json.loads(run_django(SETUP, env).strip().splitlines()[-1])["token"]
    with gunicorn_servers(env, count=2, workers=2) as servers:
        assert set(ask_everyone(servers, token)) == {200}  # every worker remembers it now
        assert run_django(REVOKE, env).strip().splitlines()[-1] == "1"
        revoked_at = time.monotonic()
        time.sleep(1.0)
        statuses = ask_everyone(servers, token, rounds=40)
        waited = time.monotonic() - revoked_at
        assert set(statuses) == {401}, statuses
        assert waited < 2.0  # the requests above were all made within the second after it


def sign_out(server: str, token: str) -> int:
    request = urllib.request.Request(
        server + "/api/auth/token", method="DELETE", headers={"Authorization": f"Bearer {token}"}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=15) as response:
        return response.status


def test_a_token_signed_out_is_refused_by_every_worker_within_a_second(tmp_path):
    """DELETE /api/auth/token (9.8) through one worker: that worker refuses the token at
    once, and every worker of both servers one second later at most."""
    env = base_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        LMS_VAR_DIR=str(tmp_path),
        LMS_THREADS="4",
        LMS_TOKEN_CACHE_SECONDS="1",
    )
    token = json.loads(run_django(SETUP, env).strip().splitlines()[-1])["token"]
    with gunicorn_servers(env, count=2, workers=2) as servers:
        assert set(ask_everyone(servers, token)) == {200}
        assert sign_out(servers[0], token) == 204
        signed_out_at = time.monotonic()
        time.sleep(1.0)
        statuses = ask_everyone(servers, token, rounds=40)
        assert set(statuses) == {401}, statuses
        assert time.monotonic() - signed_out_at < 2.0
