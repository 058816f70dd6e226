"""The organization's test-send limit (CONTRACT 8.8) holds across server processes, over real
HTTP: two gunicorn masters (two workers each) share one store, the database's or Redis; test
sends alternate between them, and the (LIMIT + 1)th is the first 429, whichever answers it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.organizations.servers import base_env, gunicorn_servers, run_django
from tests.organizations.test_invite_throttle_processes import _redis_url

pytestmark = pytest.mark.processes

LIMIT = 4
SETUP = """
import json
from django.core.management import call_command
from automations.services import create_automation, definition_or_error
from organizations.models import Organization
from organizations.services import add_member, create_api_token
call_command("migrate", verbosity=0)
call_command("createcachetable")
org = Organization.objects.create(name="Test Sends")
owner = add_member(org=org, email="owner@example.com", role="owner")
email = {"type": "send_email", "input": {"to": "learner", "subject": "Hi", "body": "Hi"}}
definition = definition_or_error(org_id=org.id, trigger="enrollment.created", actions=[email])
automation = create_automation(org=org, name="Welcome", definition=definition,
                               description="", enabled=False)
print(json.dumps({"token": create_api_token(membership=owner)[1], "id": str(automation.id)}))
"""
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def send_test(base: str, site: dict) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        f"{base}/api/automations/{site['id']}/test",
        data=b"",
        method="POST",
        headers={"Authorization": f"Bearer {site['token']}"},
    )
    try:
        with _opener.open(request, timeout=15) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)


@pytest.mark.parametrize("store", ["database", "redis"])
def test_the_test_send_limit_is_shared_by_server_processes(tmp_path, store):
    extra = {}
    if store == "redis":
        url = _redis_url()
        if url is None:
            pytest.skip("no Redis reachable (REDIS_URL, else 127.0.0.1:6379)")
        extra["REDIS_URL"] = url
    env = base_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        LMS_VAR_DIR=str(tmp_path),
        LMS_TEST_SENDS_PER_MINUTE=str(LIMIT),
        **extra,
    )
    site = json.loads(run_django(SETUP, env).strip().splitlines()[-1])
    with gunicorn_servers(env) as servers:
        answers = [send_test(servers[n % 2], site) for n in range(LIMIT + 2)]
    statuses = [status for status, _, _ in answers]
    assert statuses == [202] * LIMIT + [429, 429], statuses
    _, body, headers = answers[LIMIT]
    assert body["error"] == "throttled" and 1 <= int(headers["Retry-After"]) <= 60
    counted = run_django(
        "from automations.models import AutomationRun\n"
        "print(AutomationRun.objects.across_orgs().count())\n",
        env,
    )
    assert counted.strip().splitlines()[-1] == str(LIMIT)  # the refused ones recorded nothing
