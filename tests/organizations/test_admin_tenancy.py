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
    token = ApiToken.objects.get(key_hash=hash_token(raw))
    assert token.membership == member.membership and token.org_id == org.id
    again = staff_owner.get(f"/admin/organizations/apitoken/{token.id}/change/").content.decode()
    assert raw not in again
    assert token.prefix in again


def test_staff_owner_cannot_create_token_for_another_organizations_member(staff_owner, other_org):
    theirs = make_member(other_org)
    before = ApiToken.objects.count()
    response = staff_owner.post(
        "/admin/organizations/apitoken/add/",
        {"membership": str(theirs.membership.id), "name": "x", "expires_at": ""},
    )
    assert response.status_code == 200  # the form is shown again with an error
    assert "Select a valid choice" in response.content.decode()
    assert ApiToken.objects.count() == before
