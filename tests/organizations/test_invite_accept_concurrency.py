"""Simultaneous accepts (PostgreSQL, real threads): an invite is accepted exactly once."""

from __future__ import annotations

import pytest

from organizations.models import ApiToken, Invite, Membership, User
from tests.factories import OrganizationFactory
from tests.helpers import at_once
from tests.organizations.factories import make_invite

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def post_at_once(urls: list[str]) -> list:
    """POST each url from its own thread, released together; the responses in order."""
    return at_once([lambda client, url=url: client.post(url) for url in urls])


def accept_url(token: str) -> str:
    return f"/api/organizations/invites/{token}/accept"


def test_of_four_simultaneous_accepts_one_wins_and_three_get_410(org, recorded_events):
    invite, raw = make_invite(org)

    responses = post_at_once([accept_url(raw)] * 4)

    assert sorted(r.status_code for r in responses) == [201, 410, 410, 410]
    assert {r.json()["error"] for r in responses if r.status_code == 410} == {"invite_unavailable"}
    membership = Membership.all_orgs.get(user__email=invite.email)
    assert ApiToken.all_orgs.filter(membership=membership).count() == 1
    assert [(e.type, e.data["memberId"]) for e in recorded_events] == [
        ("invite.accepted", str(membership.id))
    ]
    invite.refresh_from_db()
    assert (invite.state, invite.accepted_by_id) == (Invite.State.ACCEPTED, membership.id)


def test_two_invites_of_one_new_person_accepted_at_once_make_one_user(org, recorded_events):
    other_org = OrganizationFactory()
    _, first = make_invite(org, email="new.person@example.com")
    _, second = make_invite(other_org, email="new.person@example.com")

    responses = post_at_once([accept_url(first), accept_url(second)])

    assert [r.status_code for r in responses] == [201, 201]
    user = User.objects.get(email="new.person@example.com")
    assert {m.org_id for m in Membership.all_orgs.filter(user=user)} == {org.id, other_org.id}
    assert len(recorded_events) == 2
