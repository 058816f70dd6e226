"""manage.py create_organization: an operator's first organization, its owner and the owner's
token, which then works against the API; a taken name or a bad e-mail changes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client

from harness.processes import gunicorn_server
from organizations.models import ApiToken, Membership, Organization, User
from tests.bundles.factories import add_bundles
from tests.factories import OrganizationFactory, UserFactory
from tests.organizations.servers import base_env, fetch

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def create(*args: str) -> dict:
    out = StringIO()
    call_command("create_organization", *args, "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


def counts() -> tuple[int, int, int, int]:
    return (
        Organization.objects.count(),
        User.objects.count(),
        Membership.all_orgs.count(),
        ApiToken.all_orgs.count(),
    )


def test_the_printed_token_lists_the_new_organizations_bundles(api, other_org):
    created = create("Acme Academy", "--owner", "Owner@Acme.example")
    org = Organization.objects.get(id=created["id"])
    add_bundles(org, ["Python basics"])
    add_bundles(other_org, ["Someone else's"])
    response = api.get("/api/bundles", token=created["owner"]["token"])
    assert response.status_code == 200, response.content
    assert [item["name"] for item in response.json()["rows"]] == ["Python basics"]
    owner = Membership.objects.for_org(org).get()
    assert (owner.user.email, owner.role) == ("owner@acme.example", "owner")
    assert not owner.user.is_staff and not owner.user.has_usable_password()
    assert "password" not in created["owner"]


@pytest.mark.parametrize("taken", ["Acme Academy", "  acme academy "])
def test_a_taken_name_is_refused_and_nothing_is_created(taken):
    OrganizationFactory(name="Acme Academy")
    before = counts()
    with pytest.raises(CommandError, match=r"exists already.*Nothing was created"):
        create(taken, "--owner", "someone@acme.example", "--staff")
    assert counts() == before


@pytest.mark.parametrize("email", ["not-an-email", "owner@", ""])
def test_a_bad_email_is_refused_and_nothing_is_created(email):
    with pytest.raises(CommandError, match="not an e-mail address"):
        create("Acme Academy", "--owner", email)
    assert counts() == (0, 0, 0, 0)


def test_an_empty_or_overlong_name_is_refused():
    with pytest.raises(CommandError, match="name is empty"):
        create("   ", "--owner", "owner@acme.example")
    with pytest.raises(CommandError, match="cannot be created: name"):
        create("x" * 201, "--owner", "owner@acme.example")
    assert counts() == (0, 0, 0, 0)


@pytest.mark.parametrize(
    "name",
    [
        "Acme\nAcademy",
        "Acme\tAcademy",
        "Acme\x1b[31m",
        "\u202eymedacA emcA",
        "Ac\u200bme",
        "Acme\udcff",
    ],
)
def test_a_name_with_control_or_invisible_characters_is_refused(name):
    with pytest.raises(CommandError, match="name: Contains a control or invisible character"):
        create(name, "--owner", "owner@acme.example")
    assert counts() == (0, 0, 0, 0)


def test_an_overlong_email_is_refused_in_one_line():
    email = "o" * 245 + "@acme.example"  # 258 characters, which the address check lets by
    with pytest.raises(CommandError, match="longer than 254 characters"):
        create("Acme Academy", "--owner", email)
    assert counts() == (0, 0, 0, 0)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_three_creates_of_one_name_in_three_cases_at_once_make_one_organization():
    """The lower-cased name's unique index decides the race the check before it cannot."""
    barrier = threading.Barrier(3)

    def one(name: str) -> str:
        barrier.wait()
        try:
            create(name, "--owner", f"{name.replace(' ', '')}@acme.example")
            return "created"
        except CommandError as exc:
            return str(exc)
        finally:
            connection.close()

    for round_ in range(5):
        names = [f"Race {round_}", f"RACE {round_}", f"race {round_}"]
        with ThreadPoolExecutor(max_workers=3) as pool:
            outcomes = list(pool.map(one, names))
        assert outcomes.count("created") == 1, outcomes
        assert all("exists already" in o for o in outcomes if o != "created"), outcomes
        assert Organization.objects.filter(name__iexact=f"race {round_}").count() == 1


def test_a_staff_owner_signs_in_with_the_printed_password_to_their_organization_only(
    other_org,
):
    created = create("Acme Academy", "--owner", "owner@acme.example", "--staff")
    password = created["owner"]["password"]
    assert password
    client = Client()
    signed_in = client.post(
        "/admin/login/?next=/admin/",
        {"username": "owner@acme.example", "password": password},
    )
    assert signed_in.status_code == 302, signed_in.content[:500]
    page = client.get("/admin/organizations/organization/")
    assert page.status_code == 200
    assert "Acme Academy" in page.content.decode()
    assert other_org.name not in page.content.decode()


def test_a_staff_owner_who_has_a_password_keeps_it():
    """A superuser made owner keeps the password they signed in with."""
    UserFactory(email="root@acme.example", password="their-own-password-1", is_superuser=True)
    created = create("Acme Academy", "--owner", "root@acme.example", "--staff")
    assert created["owner"]["password"] is None
    user = User.objects.get(email="root@acme.example")
    assert user.check_password("their-own-password-1") and user.is_staff


def test_the_human_summary_shows_the_token_once_and_how_to_sign_in():
    out = StringIO()
    call_command(
        "create_organization", "Acme Academy", "--owner", "owner@acme.example", "--staff",
        stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    token = ApiToken.all_orgs.get().prefix
    assert f"API token (shown only this once): {token}" in text
    assert "Admin password (shown only this once): " in text
    assert "/admin/" in text


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.django_db(transaction=False)
@pytest.mark.processes
def test_as_an_operator_would_from_the_command_line_to_the_served_api(tmp_path):
    """migrate, create_organization (twice: the second is refused with one line and exit 1),
    then gunicorn serves the owner's token."""
    env = base_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", LMS_VAR_DIR=str(tmp_path))
    assert manage(env, "migrate", "--noinput", "-v", "0").returncode == 0
    first = manage(env, "create_organization", "Acme Academy", "--owner", "o@acme.example",
                   "--json")  # fmt: skip
    assert first.returncode == 0, first.stderr
    token = json.loads(first.stdout)["owner"]["token"]

    again = manage(env, "create_organization", "ACME Academy", "--owner", "x@acme.example")
    assert again.returncode != 0
    assert again.stdout == ""
    assert again.stderr.strip().count("\n") == 0, again.stderr
    assert "exists already" in again.stderr and "Traceback" not in again.stderr

    bad = manage(env, "create_organization", "Beta", "--owner", "nope")
    assert bad.returncode != 0 and bad.stderr.strip().count("\n") == 0, bad.stderr
    assert "not an e-mail address" in bad.stderr

    # Bytes that are not UTF-8, and an address longer than the column: one line each.
    for args in (
        [b"Bad \xff name", "--owner", "b@acme.example"],
        ["Gamma", "--owner", "g" * 250 + "@acme.example"],
    ):
        refused = manage(env, "create_organization", *args)
        assert refused.returncode != 0 and refused.stdout == "", refused.stderr
        assert refused.stderr.strip().count("\n") == 0, refused.stderr
        assert "Traceback" not in refused.stderr

    with gunicorn_server(env, log_path=tmp_path / "gunicorn.log", workers=1) as server:
        status, body, _ = fetch(f"{server.url}/api/bundles", {"Authorization": f"Bearer {token}"})
    assert status == 200, body
    assert (body["rows"], body["total"]) == ([], 0)
