"""Invites are written by services, manage.py create_invite, the admin and seed_demo."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.messages import get_messages
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from lms.errors import WIRE_NAMES, Conflict, to_api_error
from organizations.models import Invite, hash_token
from organizations.services import create_invite, reissue_invite, revoke_invite
from tests.factories import UserFactory
from tests.helpers import assert_error
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.django_db
TOKEN = re.compile(r"inv_[A-Za-z0-9_-]{43}")


def invite_url(token: str) -> str:
    return f"/api/organizations/invites/{token}"


# --- services ------------------------------------------------------------------------------


def test_create_invite_defaults_to_a_learner_for_seven_days(org, owner):
    before = timezone.now()
    invite, _ = create_invite(
        org=org,
        email=" Grace.Hopper@Example.COM ",
        first_name=" Grace ",
        last_name="Hopper",
        invited_by=owner.membership,
    )
    assert (invite.email, invite.first_name, invite.role) == (
        "grace.hopper@example.com",
        "Grace",
        "learner",
    )
    assert invite.state == "pending" and invite.status == "pending"
    assert before + timedelta(days=7) <= invite.expires_at <= timezone.now() + timedelta(days=7)
    assert invite.invited_by == owner.membership


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"email": "not-an-email"}, "email"),
        ({"first_name": "  "}, "first_name"),
        ({"last_name": ""}, "last_name"),
        ({"role": "superhero"}, "role"),
        ({"expires_at": "past"}, "expires_at"),
    ],
)
def test_create_invite_refuses_bad_input_naming_the_field(org, changes, field):
    if changes.get("expires_at") == "past":
        changes["expires_at"] = timezone.now() - timedelta(minutes=1)
    args = {"email": "a@example.com", "first_name": "A", "last_name": "B", **changes}
    with pytest.raises(ValidationError) as caught:
        create_invite(org=org, **args)
    assert field in caught.value.message_dict
    assert not Invite.all_orgs.exists()


def test_the_inviter_must_belong_to_the_invites_organization(org, other_owner):
    with pytest.raises(ValidationError) as caught:
        create_invite(
            org=org,
            email="a@example.com",
            first_name="A",
            last_name="B",
            invited_by=other_owner.membership,
        )
    assert "invited_by" in caught.value.message_dict


def test_the_invite_services_refusals_are_answered_with_the_wires_names(org, other_owner):
    """Keyed by Python field names in the service, by the wire's at the edge
    (``lms.errors.WIRE_NAMES``), each message as the service wrote it."""
    refusals = {}
    for changes in (
        {"first_name": " ", "last_name": ""},
        {"expires_at": timezone.now() - timedelta(minutes=1)},
        {"invited_by": other_owner.membership},
        {"email": "not-an-email", "role": "superhero"},
    ):
        args = {"email": "a@example.com", "first_name": "A", "last_name": "B", **changes}
        with pytest.raises(ValidationError) as caught:
            create_invite(org=org, **args)
        error, _ = to_api_error(caught.value)
        assert (error.status, error.code) == (400, "validation_error")
        assert set(error.details) == {WIRE_NAMES.get(field, field) for field in changes}
        for field, messages in caught.value.message_dict.items():
            assert error.details[WIRE_NAMES.get(field, field)] == messages
        refusals.update(error.details)
    assert set(refusals) == {"firstName", "lastName", "expiresAt", "invitedBy", "email", "role"}
    assert refusals["expiresAt"] == ["The expiry must be in the future."]
    assert refusals["invitedBy"] == ["The inviter must be a member of the invite's organization."]


def test_revoking_an_accepted_invite_changes_nothing(org):
    invite, _ = make_invite(org, "accepted")
    assert revoke_invite(invite=invite) is False
    assert Invite.all_orgs.get(pk=invite.pk).state == "accepted"


def test_an_accepted_invite_cannot_be_reissued(org):
    invite, raw = make_invite(org, "accepted")
    with pytest.raises(Conflict):
        reissue_invite(invite=invite)
    assert Invite.all_orgs.get(pk=invite.pk).token_hash == hash_token(raw)


# --- manage.py create_invite ---------------------------------------------------------------


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_invite_command_prints_a_working_token_once(api, org):
    out, err = run(
        "create_invite",
        *("--org", org.name, "--email", "Ada@Example.com"),
        *("--first-name", "Ada", "--last-name", "Lovelace"),
        *("--role", "instructor", "--expires-in-days", "3"),
    )
    raw = out.strip()
    assert TOKEN.fullmatch(raw)
    invite = Invite.all_orgs.get(token_hash=hash_token(raw))
    assert (invite.org, invite.role, invite.email) == (org, "instructor", "ada@example.com")
    assert invite.expires_at - timezone.now() == pytest.approx(
        timedelta(days=3), abs=timedelta(minutes=1)
    )
    assert "shown only this once" in err
    assert f"GET /api/organizations/invites/{raw}" in err
    response = api.get(invite_url(raw))
    assert response.json() == {
        "email": "ada@example.com",
        "firstName": "Ada",
        "lastName": "Lovelace",
    }


def test_create_invite_command_by_org_id_with_defaults(org):
    out, _ = run(
        "create_invite",
        *("--org", str(org.id), "--email", "b@example.com"),
        *("--first-name", "B", "--last-name", "C"),
    )
    invite = Invite.all_orgs.get(token_hash=hash_token(out.strip()))
    assert invite.role == "learner"
    assert invite.expires_at - timezone.now() == pytest.approx(
        timedelta(days=7), abs=timedelta(minutes=1)
    )


BASE = ["--org", "Acme Learning", "--email", "x@example.com", "--first-name", "X"]
NAMES = ["--first-name", "X", "--last-name", "Y"]


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--org", "No Such Org", "--email", "x@example.com", *NAMES],
            "No organization",
        ),
        (
            ["--org", "Acme Learning", "--email", "nope", *NAMES],
            "not an e-mail",
        ),
        ([*BASE, "--last-name", "   "], "--last-name must not be empty"),
        ([*BASE, "--last-name", "Y" * 151], "at most 150"),
        ([*BASE, "--last-name", "Y", "--expires-in-days", "0"], "between 1 and 365"),
        ([*BASE, "--last-name", "Y", "--expires-in-days", "366"], "between 1 and 365"),
        ([*BASE, "--last-name", "Y", "--role", "king"], "invalid choice"),
        (BASE, "--last-name"),
    ],
)
def test_create_invite_command_refuses_bad_input_clearly(org, args, message):
    with pytest.raises(CommandError, match=message):
        run("create_invite", *args)
    assert not Invite.all_orgs.exists()


# --- the admin -----------------------------------------------------------------------------


@pytest.fixture
def superuser_client() -> Client:
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def add_form(org, **changes) -> dict:
    expires = timezone.localtime(timezone.now() + timedelta(days=7))
    return {
        "org": str(org.id),
        "email": "new.person@example.com",
        "first_name": "New",
        "last_name": "Person",
        "role": "learner",
        "invited_by": "",
        "expires_at_0": expires.strftime("%Y-%m-%d"),
        "expires_at_1": expires.strftime("%H:%M:%S"),
        **changes,
    }


def shown_tokens(response) -> list[str]:
    return [t for m in get_messages(response.wsgi_request) for t in TOKEN.findall(str(m))]


def test_admin_shows_the_token_once_after_creating(api, org, superuser_client):
    response = superuser_client.post("/admin/organizations/invite/add/", add_form(org), follow=True)
    assert response.redirect_chain[0][1] == 302, response.content[:2000]
    [raw] = set(TOKEN.findall(response.content.decode()))
    assert "shown only this once" in response.content.decode()
    invite = Invite.all_orgs.get()
    assert invite.token_hash == hash_token(raw)
    assert api.get(invite_url(raw)).status_code == 200
    # Afterwards only the prefix is visible, in the list and on the change page.
    for page in (
        "/admin/organizations/invite/",
        f"/admin/organizations/invite/{invite.pk}/change/",
    ):
        html = superuser_client.get(page).content.decode()
        assert raw not in html and invite.token_prefix in html


def test_admin_refuses_a_past_expiry_and_a_foreign_inviter(org, other_owner, superuser_client):
    past = timezone.localtime(timezone.now() - timedelta(days=1))
    response = superuser_client.post(
        "/admin/organizations/invite/add/",
        add_form(
            org,
            expires_at_0=past.strftime("%Y-%m-%d"),
            invited_by=str(other_owner.membership.pk),
        ),
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert errors["expires_at"] == ["The expiry must be in the future."]
    assert errors["invited_by"] == ["The inviter must be a member of the invite's organization."]
    assert not Invite.all_orgs.exists()


def test_admin_revoke_action(api, org, superuser_client):
    invite, raw = make_invite(org)
    response = superuser_client.post(
        "/admin/organizations/invite/",
        {"action": "revoke", "_selected_action": [str(invite.pk)]},
    )
    assert response.status_code == 302
    assert_error(api.get(invite_url(raw)), 410, "invite_unavailable")


def test_admin_reissue_action_shows_each_new_token_once(api, org, superuser_client):
    first, old_first = make_invite(org, "expired", email="a@example.com")
    second, old_second = make_invite(org, "revoked", email="b@example.com")
    accepted, _ = make_invite(org, "accepted", email="c@example.com")
    response = superuser_client.post(
        "/admin/organizations/invite/",
        {
            "action": "reissue",
            "_selected_action": [str(first.pk), str(second.pk), str(accepted.pk)],
        },
    )
    assert response.status_code == 302
    new_tokens = set(shown_tokens(response))
    assert len(new_tokens) == 2
    for raw in new_tokens:
        assert api.get(invite_url(raw)).status_code == 200
    for old in (old_first, old_second):
        assert_error(api.get(invite_url(old)), 404, "not_found")
    messages = [str(m) for m in get_messages(response.wsgi_request)]
    assert any("accepted invite cannot be re-issued" in m for m in messages)


def test_admin_of_one_org_sees_and_offers_only_its_invites(org, other_org, admin_member):
    make_invite(org, email="mine@example.com")
    theirs, _ = make_invite(other_org, email="theirs@example.com")
    user = admin_member.user
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    html = client.get("/admin/organizations/invite/").content.decode()
    assert "mine@example.com" in html and "theirs@example.com" not in html
    assert client.get(f"/admin/organizations/invite/{theirs.pk}/change/").status_code == 302
    form = client.get("/admin/organizations/invite/add/").context["adminform"].form
    assert list(form.fields["org"].queryset) == [org]


# --- seed_demo -------------------------------------------------------------------------------


def test_seed_demo_has_one_invite_token_in_each_state_fresh_on_every_run(api):
    first = json.loads(run("seed_demo", "--json")[0])
    second = json.loads(run("seed_demo", "--json")[0])
    for key in ("org", "otherOrg"):
        tokens = second[key]["invites"]
        assert set(tokens) == {"pending", "expired", "accepted", "revoked", "existingAccount"}
        assert api.get(invite_url(tokens["pending"])).status_code == 200
        assert api.get(invite_url(tokens["existingAccount"])).status_code == 200
        for state in ("expired", "accepted", "revoked"):
            assert_error(api.get(invite_url(tokens[state])), 410, "invite_unavailable")
        for old in first[key]["invites"].values():
            assert_error(api.get(invite_url(old)), 404, "not_found")
    assert Invite.all_orgs.count() == 10  # five per organization, not five more per run
