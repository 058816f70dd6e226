"""7.3 POST /api/organizations/invites/{token}/accept: public, exactly once, a member with a
token shown once, the invite.accepted event in the same transaction."""

from __future__ import annotations

import logging
import uuid

import pytest
from django.test import Client

from organizations.models import ApiToken, Invite, Membership, User
from tests.factories import OrganizationFactory, UserFactory
from tests.helpers import assert_error, make_member
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.django_db

ANSWER_KEYS = {"token", "orgId", "role", "email", "firstName", "lastName"}


def accept_url(token: str) -> str:
    return f"/api/organizations/invites/{token}/accept"


def accept(api, token: str, **kwargs):
    return api.post(accept_url(token), **kwargs)


@pytest.fixture
def inviter(org):
    return make_member(org, Membership.Role.ADMIN)


@pytest.fixture
def pending(org, inviter) -> tuple[Invite, str]:
    return make_invite(org, role=Membership.Role.INSTRUCTOR, invited_by=inviter.membership)


def test_accepting_makes_a_new_user_a_member_with_a_token_shown_once(api, org, pending):
    _, raw = pending
    response = accept(api, raw)

    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == ANSWER_KEYS
    assert body == {
        "token": body["token"],
        "orgId": str(org.id),
        "role": "instructor",
        "email": "grace.hopper@example.com",
        "firstName": "Grace",
        "lastName": "Hopper",
    }
    assert response["Cache-Control"] == "no-store"
    user = User.objects.get(email="grace.hopper@example.com")
    assert (user.first_name, user.last_name, user.has_usable_password()) == (
        "Grace",
        "Hopper",
        False,
    )
    membership = Membership.all_orgs.get(user=user)
    assert (membership.org_id, membership.role) == (org.id, "instructor")
    token = ApiToken.all_orgs.get(membership=membership)
    assert body["token"].startswith(token.prefix) and body["token"].startswith("lms_")
    assert body["token"] not in " ".join(str(v) for v in vars(token).values())  # a hash only


def test_the_new_token_works_as_that_member(api, org, pending):
    token = accept(api, pending[1]).json()["token"]
    assert api.get("/api/bundles", token=token).status_code == 200
    # A member, with the invite's role: an instructor may not read automations.
    assert_error(api.get(f"/api/automations/{uuid.uuid4()}", token=token), 403, "permission_denied")


def test_the_invite_records_who_accepted_and_when(api, pending):
    invite, raw = pending
    before = Invite.all_orgs.get(pk=invite.pk).updated_at
    accept(api, raw)
    invite.refresh_from_db()
    assert invite.state == Invite.State.ACCEPTED and invite.status == "accepted"
    assert invite.accepted_by == Membership.all_orgs.get(user__email="grace.hopper@example.com")
    assert invite.accepted_at is not None and invite.accepted_at >= before


def test_a_second_accept_is_410_and_changes_nothing(api, pending):
    invite, raw = pending
    assert accept(api, raw).status_code == 201
    body = assert_error(accept(api, raw), 410, "invite_unavailable")
    assert body["message"] == "This invite has already been accepted."
    assert ApiToken.all_orgs.filter(membership__user__email=invite.email).count() == 1
    # The lookup agrees.
    assert_error(api.get(f"/api/organizations/invites/{raw}"), 410, "invite_unavailable")


def test_accepting_emits_invite_accepted_once_with_its_data(
    api, org, inviter, pending, recorded_events
):
    invite, raw = pending
    accept(api, raw)
    accept(api, raw)  # 410: no second event
    membership = Membership.all_orgs.get(user__email="grace.hopper@example.com")
    assert [(e.type, e.org_id, e.data) for e in recorded_events] == [
        (
            "invite.accepted",
            org.id,
            {
                "inviteId": str(invite.id),
                "memberId": str(membership.id),
                "email": "grace.hopper@example.com",
                "invitedBy": str(inviter.membership.id),
            },
        )
    ]
    invite.refresh_from_db()
    assert recorded_events[0].occurred_at == invite.accepted_at


def test_an_invite_without_inviter_has_invited_by_null(api, org, recorded_events):
    _, raw = make_invite(org)
    accept(api, raw)
    assert recorded_events[0].data["invitedBy"] is None


def test_the_event_is_in_the_accepting_transaction(api, pending, failing_receiver):
    """A receiver that fails makes the whole accept fail: nothing of it was kept."""
    failing_receiver("invite.accepted")
    invite, raw = pending
    assert_error(accept(api, raw), 500, "internal_error")
    invite.refresh_from_db()
    assert (invite.state, invite.accepted_by, invite.accepted_at) == ("pending", None, None)
    assert not User.objects.filter(email=invite.email).exists()
    assert not ApiToken.all_orgs.filter(name="invite").exists()


def test_an_existing_user_is_found_by_e_mail_in_any_case(api, org, pending):
    invite, raw = pending
    # Stored in mixed case, as the admin's user form may keep it.
    user = UserFactory(email="Grace.Hopper@Example.com", first_name="Amazing", last_name="Grace")
    body = accept(api, raw).json()
    assert User.objects.count() == 2  # the inviter and Grace: nobody new
    assert Membership.all_orgs.get(org=org, user=user).role == "instructor"
    invite.refresh_from_db()
    assert invite.accepted_by.user == user
    # The answer is the invite's address and names, never the account's (CONTRACT 7.3).
    assert (body["email"], body["firstName"], body["lastName"]) == (
        "grace.hopper@example.com",
        "Grace",
        "Hopper",
    )


def test_an_existing_account_answers_the_invites_names_and_keeps_its_own(api, org):
    """Whoever holds the token (an admin of another organization who invited an address) learns
    neither that the address has an account nor the names it carries."""
    user = UserFactory(email="ada@example.com", first_name="Augusta", last_name="King")
    make_member(OrganizationFactory(), user=user)
    _, raw = make_invite(org, email="ada@example.com", first_name="Ada", last_name="Lovelace")
    body = accept(api, raw).json()
    assert (body["email"], body["firstName"], body["lastName"]) == (
        "ada@example.com",
        "Ada",
        "Lovelace",
    )
    assert Membership.all_orgs.get(org=org).user == user
    user.refresh_from_db()
    assert (user.first_name, user.last_name) == ("Augusta", "King")
    assert "Augusta" not in str(body) and "King" not in str(body)


def test_an_existing_membership_keeps_its_role(api, org, pending, recorded_events):
    invite, raw = pending
    owner = make_member(org, Membership.Role.OWNER, user=UserFactory(email=invite.email))
    body = accept(api, raw).json()
    owner.membership.refresh_from_db()
    assert owner.membership.role == body["role"] == "owner"
    assert Membership.all_orgs.filter(user=owner.user).count() == 1
    # A new token besides the one the member had; both work.
    assert body["token"] != owner.token
    for token in (owner.token, body["token"]):
        assert api.get("/api/bundles", token=token).status_code == 200
    assert recorded_events[0].data["memberId"] == str(owner.membership.id)


def test_a_member_of_another_organization_gets_a_second_membership(api, org, pending):
    invite, raw = pending
    elsewhere = make_member(OrganizationFactory(), user=UserFactory(email=invite.email))
    body = accept(api, raw).json()
    assert body["orgId"] == str(org.id)
    assert set(
        Membership.all_orgs.filter(user=elsewhere.user).values_list("org_id", flat=True)
    ) == {
        org.id,
        elsewhere.org.id,
    }
    elsewhere.membership.refresh_from_db()
    assert elsewhere.membership.role == "learner"


def test_a_deactivated_account_cannot_accept_and_the_invite_stays_pending(api, pending):
    invite, raw = pending
    UserFactory(email=invite.email, is_active=False)
    body = assert_error(accept(api, raw), 410, "invite_unavailable")
    assert "deactivated" in body["message"]
    invite.refresh_from_db()
    assert invite.state == "pending"
    assert not Membership.all_orgs.filter(user__email=invite.email).exists()


@pytest.mark.parametrize(
    "status, message",
    [
        ("accepted", "This invite has already been accepted."),
        ("revoked", "This invite has been revoked."),
        ("expired", "This invite has expired."),
    ],
)
def test_unavailable_invites_are_410(api, org, status, message, recorded_events):
    _, raw = make_invite(org, status)
    body = assert_error(accept(api, raw), 410, "invite_unavailable")
    assert body["message"] == message
    assert not User.objects.filter(email="grace.hopper@example.com").exists()
    assert recorded_events == []


@pytest.mark.parametrize(
    "token", ["inv_" + "A" * 43, "x" * 10_000, "%ED%A0%80", "a/b", "%00", "accept", "inv_%20"]
)
def test_unknown_tokens_are_404(api, pending, token):
    body = assert_error(accept(api, token), 404, "not_found")
    assert body["message"] == "No invite with that token."


def test_a_path_without_a_token_before_accept_is_the_lookup_route(api, pending):
    # "invites/accept" and "invites//accept" read a token "accept" or "/accept": not a POST.
    for url in ("/api/organizations/invites/accept", "/api/organizations/invites//accept"):
        assert_error(api.post(url), 405, "method_not_allowed")


@pytest.mark.parametrize("body", [None, {}])
def test_the_body_may_be_absent_or_an_empty_object(api, pending, body):
    assert accept(api, pending[1], data=body).status_code == 201


def test_an_absent_body_needs_no_content_type(api, pending):
    response = api.client.generic("POST", accept_url(pending[1]))
    assert response.status_code == 201


@pytest.mark.parametrize(
    "raw, status, code",
    [
        ('{"role": "owner"}', 400, "validation_error"),
        ('{"token": null, "email": "x@example.com"}', 400, "validation_error"),
        ("[]", 400, "malformed_request"),
        ('"accept"', 400, "malformed_request"),
        ("null", 400, "malformed_request"),
        ("{", 400, "malformed_request"),
    ],
)
def test_any_other_body_is_400_and_leaves_the_invite_pending(api, pending, raw, status, code):
    invite, token = pending
    body = assert_error(accept(api, token, raw=raw), status, code)
    if code == "validation_error":
        assert set(body["details"]) <= {"role", "token", "email"} and body["details"]
    invite.refresh_from_db()
    assert invite.state == "pending"


def test_a_body_that_is_not_json_is_415(api, pending):
    assert_error(
        accept(api, pending[1], raw="x", content_type="text/plain"), 415, "unsupported_media_type"
    )


def test_the_body_is_checked_before_the_token(api):
    assert_error(accept(api, "inv_unknown", raw='{"a": 1}'), 400, "validation_error")


@pytest.mark.parametrize(
    "authorization", ["valid", "Bearer lms_not-a-real-token", "Basic dXNlcjpwYXNz", "Bearer"]
)
def test_any_authorization_header_is_ignored(api, org, pending, authorization):
    other = make_member(OrganizationFactory(), Membership.Role.OWNER)
    header = f"Bearer {other.token}" if authorization == "valid" else authorization
    response = accept(api, pending[1], headers={"Authorization": header})
    assert response.status_code == 201
    assert response.json()["orgId"] == str(org.id)  # the invite's, never the caller's
    assert "WWW-Authenticate" not in response


def test_get_on_the_accept_route_is_405(api, pending):
    assert_error(api.get(accept_url(pending[1])), 405, "method_not_allowed")
    invite = Invite.all_orgs.get(pk=pending[0].pk)
    assert invite.state == "pending"


def test_no_log_line_keeps_the_token(api, pending, caplog):
    """Whatever is logged, at any level (the access line, SQL), has at most the prefix."""
    invite, raw = pending
    with caplog.at_level(logging.DEBUG):
        accept(api, raw)
        accept(api, raw)  # 410
        accept(api, raw, raw='{"x": 1}')  # 400
        accept(api, raw + "x")  # 404
    assert caplog.records
    for record in caplog.records:
        assert raw not in record.getMessage() and raw not in str(vars(record)), record
    access = [r for r in caplog.records if r.name == "lms.access"]
    assert [r.status for r in access] == [201, 410, 400, 404]
    assert access[0].path == f"/api/organizations/invites/{invite.token_prefix}.../accept"


@pytest.fixture
def rate(settings):
    def set_rate(value: str) -> None:
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {"invite_lookup": value},
        }

    return set_rate


def test_accepts_count_toward_the_lookup_throttle(api, org, rate):
    rate("3/min")
    _, first = make_invite(org, email="first@example.com")
    _, second = make_invite(org, email="second@example.com")
    assert api.get(f"/api/organizations/invites/{first}").status_code == 200
    assert accept(api, first).status_code == 201
    assert accept(api, "inv_unknown").status_code == 404
    # The fourth request in the minute, whatever it is, is refused before the invite is seen.
    response = accept(api, second)
    assert_error(response, 429, "throttled")
    assert 59 <= int(response["Retry-After"]) <= 60
    assert_error(api.get(f"/api/organizations/invites/{second}"), 429, "throttled")
    assert Invite.all_orgs.get(email="second@example.com").state == "pending"


def test_unknown_tokens_cannot_be_enumerated_through_accept(api, rate):
    rate("5/min")
    statuses = [accept(api, f"inv_guess{n}").status_code for n in range(7)]
    assert statuses == [404] * 5 + [429] * 2


# The throttle (one upsert); then the locked invite, the user lookup and insert (in a
# savepoint), the membership lookup and insert (in a savepoint), the token (in a savepoint)
# and the invite's update, all in one savepoint; and invite.accepted's look-up of the
# invite's courses (none here: see test_invite_courses.py) and of the organization's
# automations.
ACCEPT_QUERIES = 18


def test_query_count_is_pinned(api, org, django_assert_num_queries):
    _, warm = make_invite(org, email="warm@example.com")
    accept(api, warm)  # the address's first request in the window also purges stale windows
    _, raw = make_invite(org)
    with django_assert_num_queries(ACCEPT_QUERIES):
        assert accept(api, raw).status_code == 201


def test_the_schema_documents_the_accept_as_public_with_201_and_410(api):
    schema = api.get("/api/schema/", query={"format": "json"}).json()
    operation = schema["paths"]["/api/organizations/invites/{token}/accept"]["post"]
    assert {"201", "400", "404", "410", "413", "415", "429"} <= set(operation["responses"])
    assert "401" not in operation["responses"] and "403" not in operation["responses"]
    assert operation.get("security") in (None, [], [{}])
    assert not operation["requestBody"].get("required", False)
    ref = operation["responses"]["201"]["content"]["application/json"]["schema"]["$ref"]
    answer = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(answer["properties"]) == ANSWER_KEYS


def test_the_admin_shows_who_accepted_and_when(api, org, pending):
    invite, raw = pending
    accept(api, raw)
    invite.refresh_from_db()
    staff = Client()
    staff.force_login(UserFactory(is_staff=True, is_superuser=True))
    listing = staff.get("/admin/organizations/invite/").content.decode()
    assert "Accepted at" in listing
    page = staff.get(f"/admin/organizations/invite/{invite.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert str(invite.accepted_by) in html
    assert "Accepted by" in html and "Accepted at" in html
    fields = page.context["adminform"].form.fields
    assert "accepted_by" not in fields and "accepted_at" not in fields  # read-only
