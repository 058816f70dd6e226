"""Secrets and lists in the admin: a token's and an invite's status at a glance and as a
filter, no expiry in the past, a warning on a second pending invite, no "delete" link next to
a chosen record, organizations named in a superuser's choices, readable sizes."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from organizations.models import ApiToken, Invite
from organizations.services import create_api_token
from tests.downloads.factories import AssetFactory
from tests.helpers import admin_client, make_member
from tests.learn.factories import CourseFactory
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.django_db


@pytest.fixture
def superuser_client(db) -> Client:
    return admin_client()


@pytest.fixture
def staff(org) -> Client:
    return admin_client(org)


def rows(response) -> list[str]:
    return [" ".join(str(r) for r in row) for row in response.context["cl"].result_list]


def test_tokens_show_their_status_and_filter_by_it(staff, org):
    member = make_member(org)
    create_api_token(membership=member.membership, name="active-one")
    revoked, _ = create_api_token(membership=member.membership, name="revoked-one")
    expired, _ = create_api_token(membership=member.membership, name="expired-one")
    ApiToken.all_orgs.filter(pk=revoked.pk).update(revoked_at=timezone.now())
    ApiToken.all_orgs.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(1))
    url = "/admin/organizations/apitoken/"
    page = staff.get(url).content.decode()
    for status in ("active", "revoked", "expired"):
        assert f'<td class="field-status">{status}</td>' in page
        names = {t.name for t in staff.get(url, {"status": status}).context["cl"].result_list}
        assert names == {f"{status}-one"} | ({"test"} if status == "active" else set())


def test_a_token_expiring_in_the_past_is_refused(staff, org):
    member = make_member(org)
    yesterday = timezone.localtime() - timedelta(days=1)
    response = staff.post(
        "/admin/organizations/apitoken/add/",
        {
            "membership": str(member.membership.pk),
            "name": "late",
            "expires_at_0": yesterday.strftime("%Y-%m-%d"),
            "expires_at_1": yesterday.strftime("%H:%M:%S"),
        },
    )
    assert response.context["adminform"].form.errors == {
        "expires_at": ["The expiry must be in the future."]
    }
    assert not ApiToken.all_orgs.filter(name="late").exists()


def test_an_invite_expires_in_seven_days_by_default_and_expired_ones_are_a_filter(staff, org):
    form = staff.get("/admin/organizations/invite/add/").context["adminform"].form
    default = form["expires_at"].value()
    assert abs(default - (timezone.now() + timedelta(days=7))) < timedelta(minutes=1)
    make_invite(org, email="old@example.com", status="expired")
    make_invite(org, email="new@example.com")
    listing = staff.get("/admin/organizations/invite/", {"status": "expired"})
    assert [i.email for i in listing.context["cl"].result_list] == ["old@example.com"]
    listing = staff.get("/admin/organizations/invite/", {"status": "pending"})
    assert [i.email for i in listing.context["cl"].result_list] == ["new@example.com"]


def test_a_second_pending_invite_for_one_email_is_warned_about(staff, org):
    make_invite(org, email="grace@example.com")
    in_a_week = timezone.localtime() + timedelta(days=7)
    response = staff.post(
        "/admin/organizations/invite/add/",
        {
            "org": str(org.pk),
            "email": "Grace@example.com",
            "first_name": "Grace",
            "last_name": "Hopper",
            "role": "learner",
            "expires_at_0": in_a_week.strftime("%Y-%m-%d"),
            "expires_at_1": in_a_week.strftime("%H:%M:%S"),
        },
        follow=True,
    )
    texts = [str(m) for m in response.context["messages"]]
    assert any("already had 1 pending invite(s)" in text for text in texts), texts
    assert Invite.all_orgs.filter(email__iexact="grace@example.com").count() == 2


def test_no_delete_link_next_to_a_chosen_record(staff):
    page = staff.get("/admin/organizations/invite/add/").content.decode()
    assert 'id="delete_id_invited_by"' not in page
    assert 'id="change_id_invited_by"' in page


def test_a_superuser_reads_each_choices_organization(superuser_client, staff, org, other_org):
    CourseFactory(org=org, title="Python")
    CourseFactory(org=other_org, title="Python")

    def labels(client) -> list[str]:
        form = client.get("/admin/learn/enrollment/add/").context["adminform"].form
        return sorted(label for value, label in form.fields["course"].choices if value)

    assert labels(superuser_client) == sorted(
        [f"Python ({org.name})", f"Python ({other_org.name})"]
    )
    assert labels(staff) == ["Python"]


def test_asset_sizes_are_readable(staff, org):
    AssetFactory(org=org, size=1_572_864)
    page = staff.get("/admin/downloads/asset/").content.decode()
    assert "1.5\xa0MB" in page


def test_a_superusers_autocomplete_names_each_results_organization(
    superuser_client, staff, org, other_org
):
    AssetFactory(org=org, name="Intro video")
    AssetFactory(org=other_org, name="Intro video")
    query = {
        "app_label": "downloads",
        "model_name": "downloadasset",
        "field_name": "asset",
        "term": "Intro",
    }

    def texts(client) -> list[str]:
        response = client.get("/admin/autocomplete/", query)
        assert response.status_code == 200
        return sorted(result["text"] for result in response.json()["results"])

    assert texts(superuser_client) == sorted(
        [f"Intro video ({org.name})", f"Intro video ({other_org.name})"]
    )
    assert texts(staff) == ["Intro video"]
