import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from organizations.models import ApiToken, Membership, Organization, hash_token

pytestmark = pytest.mark.django_db


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_api_token_prints_a_working_token_once(org):
    out, err = run(
        "create_api_token",
        "--email",
        "New@Example.com",
        "--org",
        str(org.id),
        "--role",
        "instructor",
        "--expires-in-days",
        "30",
    )
    raw = out.strip()
    token = ApiToken.all_orgs.get(key_hash=hash_token(raw))
    assert token.membership.user.email == "new@example.com"
    assert token.membership.role == "instructor"
    assert token.expires_at is not None
    assert "shown only this once" in err


def test_create_api_token_by_org_name_for_existing_member(org, learner):
    out, _ = run("create_api_token", "--email", learner.user.email, "--org", org.name)
    assert ApiToken.all_orgs.get(key_hash=hash_token(out.strip())).membership == learner.membership


@pytest.mark.parametrize(
    "args, message",
    [
        (["--email", "nobody@example.com", "--org", "Acme Learning"], "not a member"),
        (
            ["--email", "x@example.com", "--org", "No Such Org", "--role", "owner"],
            "No organization",
        ),
        (["--email", "not-an-email", "--org", "Acme Learning", "--role", "owner"], "e-mail"),
        (
            [
                "--email",
                "x@example.com",
                "--org",
                "Acme Learning",
                "--role",
                "owner",
                "--expires-in-days",
                "0",
            ],
            "at least 1",
        ),
    ],
)
def test_create_api_token_refuses_bad_input_clearly(org, args, message):
    with pytest.raises(CommandError, match=message):
        run("create_api_token", *args)


def test_seed_demo_json_manifest_and_idempotence():
    first = json.loads(run("seed_demo", "--json")[0])
    second = json.loads(run("seed_demo", "--json")[0])
    assert set(first) == {"org", "otherOrg", "superuser"}
    assert set(first["superuser"]) == set(first["org"]["staff"]) == {"email", "password"}
    assert first["org"]["name"] == "Demo Academy"
    assert set(first["org"]["tokens"]) == {"owner", "admin", "instructor", "learner", "outsider"}
    assert first["org"]["id"] == second["org"]["id"]
    assert Organization.objects.count() == 2
    assert Membership.all_orgs.count() == 10
    # Every run issues fresh tokens and revokes the previous run's.
    old = ApiToken.all_orgs.get(key_hash=hash_token(first["org"]["tokens"]["learner"]))
    new = ApiToken.all_orgs.get(key_hash=hash_token(second["org"]["tokens"]["learner"]))
    assert old.revoked_at is not None and new.revoked_at is None


def test_seed_demo_human_summary_has_a_curl_line():
    out, _ = run("seed_demo")
    assert 'curl -H "Authorization: Bearer lms_' in out
    assert "/admin/" in out
