"""The bundle admin: search and filters, within the staff user's organizations."""

import pytest
from django.test import Client

from bundles.models import Bundle
from organizations.models import Membership, User
from tests.bundles.factories import add_bundles
from tests.helpers import make_member

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/bundles/bundle/"


# The bundle page's inlines (courses, downloads), submitted empty.
NO_ITEMS = {
    f"{prefix}-{key}": value
    for prefix in ("bundlecourse_set", "bundledownload_set")
    for key, value in (
        ("TOTAL_FORMS", "0"),
        ("INITIAL_FORMS", "0"),
        ("MIN_NUM_FORMS", "0"),
        ("MAX_NUM_FORMS", "1000"),
    )
}


@pytest.fixture
def superuser_client():
    client = Client()
    client.force_login(User.objects.create_superuser("root@example.com", "pw"))
    return client


@pytest.fixture
def org_admin_client(org):
    member = make_member(org, Membership.Role.ADMIN)
    member.user.is_staff = True
    member.user.save()
    client = Client()
    client.force_login(member.user)
    return client


def listed(response) -> list[str]:
    assert response.status_code == 200
    return sorted(b.name for b in response.context["cl"].result_list)


def test_search_is_case_insensitive(superuser_client, org, other_org):
    add_bundles(org, ["Python Basics", "Go Basics"])
    add_bundles(other_org, ["advanced PYTHON"])
    response = superuser_client.get(CHANGELIST, {"q": "python"})
    assert listed(response) == ["Python Basics", "advanced PYTHON"]


def test_filter_by_organization(superuser_client, org, other_org):
    add_bundles(org, ["Mine"])
    add_bundles(other_org, ["Theirs"])
    assert listed(superuser_client.get(CHANGELIST, {"org": str(other_org.id)})) == ["Theirs"]


def test_staff_see_only_their_organizations_bundles(org_admin_client, org, other_org):
    add_bundles(org, ["Mine"])
    [theirs] = add_bundles(other_org, ["Theirs"])
    assert listed(org_admin_client.get(CHANGELIST)) == ["Mine"]
    response = org_admin_client.get(f"{CHANGELIST}{theirs.id}/change/")
    assert response.status_code in (302, 404)


def test_staff_add_a_bundle_only_to_their_organization(org_admin_client, org, other_org):
    refused = org_admin_client.post(
        f"{CHANGELIST}add/",
        {"org": str(other_org.id), "name": "Sneaky", "description": "", **NO_ITEMS},
    )
    assert refused.status_code == 200 and "org" in refused.context["adminform"].form.errors
    created = org_admin_client.post(
        f"{CHANGELIST}add/",
        {"org": str(org.id), "name": "New bundle", "description": "d", **NO_ITEMS},
    )
    assert created.status_code == 302
    assert Bundle.all_orgs.get(name="New bundle").org == org


def test_a_blank_name_is_refused(org_admin_client, org):
    response = org_admin_client.post(
        f"{CHANGELIST}add/", {"org": str(org.id), "name": "", "description": "", **NO_ITEMS}
    )
    assert "name" in response.context["adminform"].form.errors
    assert not Bundle.all_orgs.exists()
