"""The admin keeps tenancy as strictly as the API, and shows a token only once."""

import re

import pytest
from django.test import Client

from organizations.models import ApiToken, Membership, hash_token
from tests.factories import UserFactory
from tests.helpers import make_member

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_owner(org):
    """A staff user (not a superuser) who is owner of ``org`` only."""
    user = UserFactory(is_staff=True, password="pw-for-tests-1")
    make_member(org, Membership.Role.OWNER, user=user)
    client = Client()
    client.force_login(user)
    return client


def test_staff_owner_lists_only_their_organizations_memberships(staff_owner, org, other_org):
    mine, theirs = make_member(org), make_member(other_org)
    page = staff_owner.get("/admin/organizations/membership/").content.decode()
    assert mine.user.email in page
    assert theirs.user.email not in page
    assert other_org.name not in page


def test_staff_owner_cannot_open_another_organizations_record(staff_owner, other_org):
    theirs = make_member(other_org)
    response = staff_owner.get(
        f"/admin/organizations/membership/{theirs.membership.id}/change/", follow=True
    )
    assert theirs.user.email not in response.content.decode()


def test_organization_choices_list_only_their_organizations(staff_owner, org, other_org):
    page = staff_owner.get("/admin/organizations/membership/add/").content.decode()
    choices = re.findall(r'<option value="([0-9a-f-]{36})"', page)
    assert str(org.id) in choices
    assert str(other_org.id) not in choices


def test_staff_learner_sees_no_organization_data(org):
    user = UserFactory(is_staff=True)
    make_member(org, Membership.Role.LEARNER, user=user)
    client = Client()
    client.force_login(user)
    response = client.get("/admin/organizations/membership/")
    assert response.status_code == 403


def test_superuser_sees_every_organization(org, other_org):
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    mine, theirs = make_member(org), make_member(other_org)
    page = client.get("/admin/organizations/membership/").content.decode()
    assert mine.user.email in page and theirs.user.email in page


def test_token_created_in_admin_is_shown_once_then_only_its_prefix(staff_owner, org):
    member = make_member(org)
    response = staff_owner.post(
        "/admin/organizations/apitoken/add/",
        {"membership": str(member.membership.id), "name": "mobile app", "expires_at": ""},
        follow=True,
    )
    page = response.content.decode()
    raw = re.search(r"(lms_[A-Za-z0-9_-]{43})", page).group(1)
    token = ApiToken.all_orgs.get(key_hash=hash_token(raw))
    assert token.membership == member.membership and token.org_id == org.id
    again = staff_owner.get(f"/admin/organizations/apitoken/{token.id}/change/").content.decode()
    assert raw not in again
    assert token.prefix in again


def test_staff_owner_cannot_create_token_for_another_organizations_member(staff_owner, other_org):
    theirs = make_member(other_org)
    before = ApiToken.all_orgs.count()
    response = staff_owner.post(
        "/admin/organizations/apitoken/add/",
        {"membership": str(theirs.membership.id), "name": "x", "expires_at": ""},
    )
    assert response.status_code == 200  # the form is shown again with an error
    assert "Select a valid choice" in response.content.decode()
    assert ApiToken.all_orgs.count() == before


# --- roles: nobody grants a role above their own ------------------------------------------


@pytest.fixture
def staff_admin(org):
    """A staff user (not a superuser) who is an ``admin`` member of ``org``."""
    user = UserFactory(is_staff=True)
    member = make_member(org, Membership.Role.ADMIN, user=user)
    client = Client()
    client.force_login(user)
    client.member = member
    return client


def change_membership(client, membership, **data):
    """Posts the membership's change page with ``data``; ``membership`` is then read again."""
    response = client.post(
        f"/admin/organizations/membership/{membership.id}/change/",
        {"user": str(membership.user_id), "role": membership.role, **data},
    )
    membership.refresh_from_db()
    return response


def test_an_admin_cannot_make_themselves_owner(staff_admin):
    own = staff_admin.member.membership
    response = change_membership(staff_admin, own, role="owner")
    assert response.status_code == 200  # the form again, with its error
    assert "role" in response.context["adminform"].form.errors
    assert own.role == "admin"


def test_an_admin_cannot_make_anyone_owner_nor_invite_an_owner(staff_admin, org):
    learner = make_member(org).membership
    response = change_membership(staff_admin, learner, role="owner")
    assert response.status_code == 200
    assert learner.role == "learner"
    form = staff_admin.get("/admin/organizations/membership/add/").content.decode()
    assert 'value="owner"' not in form
    response = staff_admin.post(
        "/admin/organizations/invite/add/",
        {
            "org": str(org.id),
            "email": "boss@example.com",
            "first_name": "B",
            "last_name": "C",
            "role": "owner",
            "expires_at_0": "",
            "expires_at_1": "",
        },
    )
    assert response.status_code == 200
    assert not org_invites(org, "boss@example.com")


def org_invites(org, email):
    from organizations.models import Invite

    return list(Invite.all_orgs.filter(org=org, email=email))


def test_an_admin_may_grant_roles_up_to_their_own(staff_admin, org):
    learner = make_member(org).membership
    response = change_membership(staff_admin, learner, role="admin")
    assert response.status_code == 302
    assert learner.role == "admin"


def test_an_admin_cannot_edit_an_owners_membership(staff_admin, org):
    owner = make_member(org, Membership.Role.OWNER).membership
    response = change_membership(staff_admin, owner, role="learner")
    assert response.status_code == 403
    assert owner.role == "owner"
    delete = staff_admin.post(
        f"/admin/organizations/membership/{owner.id}/delete/", {"post": "yes"}
    )
    assert delete.status_code == 403
    assert Membership.all_orgs.filter(pk=owner.pk).exists()


def test_an_admin_cannot_mint_a_token_for_an_owner(staff_admin, org):
    owner = make_member(org, Membership.Role.OWNER).membership
    response = staff_admin.post(
        "/admin/organizations/apitoken/add/",
        {"membership": str(owner.id), "name": "escalation", "expires_at": ""},
    )
    assert response.status_code == 200  # the form again: not a valid choice
    assert not ApiToken.all_orgs.filter(membership=owner, name="escalation").exists()
    page = staff_admin.get("/admin/organizations/apitoken/add/").content.decode()
    assert str(owner.id) not in page


# --- a record's organization is fixed once created -----------------------------------------


def test_a_membership_cannot_be_moved_to_another_organization(org, other_org):
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    member = make_member(org)
    token_org = ApiToken.all_orgs.get(membership=member.membership).org_id
    page = client.get(f"/admin/organizations/membership/{member.membership.id}/change/")
    assert 'name="org"' not in page.content.decode()  # shown, not editable
    response = client.post(
        f"/admin/organizations/membership/{member.membership.id}/change/",
        {"org": str(other_org.id), "user": str(member.user.id), "role": "learner"},
    )
    assert response.status_code == 302
    member.membership.refresh_from_db()
    assert member.membership.org_id == org.id
    assert ApiToken.all_orgs.get(membership=member.membership).org_id == token_org == org.id


def test_saving_a_tenant_owned_record_in_another_organization_is_refused(org, other_org):
    membership = make_member(org).membership
    membership.org = other_org
    with pytest.raises(ValueError, match="fixed once created"):
        membership.save()
    membership.refresh_from_db()
    assert membership.org_id == org.id


# --- the buttons of automations and runs (CONTRACT 8.8) -------------------------------------


def test_staff_of_another_organization_get_404_from_an_automations_buttons(staff_owner, other_org):
    from automations.models import Automation, AutomationRun
    from tests.automations.factories import AutomationFactory, make_run

    theirs = AutomationFactory(org=other_org)
    secret = theirs.signing_secret
    run = make_run(theirs, status="failed")
    base = "/admin/automations"
    for url in (
        f"{base}/automation/{theirs.id}/roll-secret/",
        f"{base}/automation/{theirs.id}/send-test/",
        f"{base}/automationrun/{run.id}/retry/",
    ):
        assert staff_owner.post(url).status_code == 404, url
    assert Automation.all_orgs.get(id=theirs.id).signing_secret == secret
    assert AutomationRun.all_orgs.get().status == "failed"
