"""9.2: staff invite over the API (POST /api/organizations/invites), list the invites
(GET, newest first, no tokens, a status filter) and revoke a pending one
(POST /api/organizations/invites/{inviteId}/revoke)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from organizations.models import Invite, InviteCourse, Membership
from tests.browser.live_api import LiveApi
from tests.helpers import assert_error, assert_foreign_looks_missing, at_once, make_member
from tests.learn.factories import CourseFactory
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.django_db

Role = Membership.Role
URL = "/api/organizations/invites"
ROW_KEYS = {
    "id",
    "email",
    "firstName",
    "lastName",
    "role",
    "courseIds",
    "status",
    "expiresAt",
    "createdAt",
}


def revoke_url(invite_id) -> str:
    return f"{URL}/{invite_id}/revoke"


def body(**changes) -> dict:
    return {"email": "Ada.Lovelace@Example.com", "firstName": "Ada", "lastName": "Lovelace"} | (
        changes
    )


def test_an_admin_invites_into_courses_and_sees_the_token_once(api, org, admin_member):
    courses = [CourseFactory(org=org), CourseFactory(org=org, published=False)]
    course_ids = [str(courses[1].id), str(courses[0].id)]
    before = timezone.now()
    response = api.post(
        URL, body(role="instructor", courseIds=course_ids), token=admin_member.token
    )

    assert response.status_code == 201, response.content
    assert response["Cache-Control"] == "no-store"
    answer = response.json()
    assert set(answer) == ROW_KEYS | {"token"}
    assert answer["email"] == "ada.lovelace@example.com"
    assert (answer["firstName"], answer["lastName"], answer["role"]) == (
        "Ada",
        "Lovelace",
        "instructor",
    )
    assert answer["courseIds"] == course_ids  # in the order given
    assert answer["status"] == "pending"
    expires = parse_datetime(answer["expiresAt"])
    assert before + timedelta(days=7) <= expires <= timezone.now() + timedelta(days=7)
    invite = Invite.objects.for_org(org).get(id=answer["id"])
    assert invite.invited_by_id == admin_member.membership.id
    assert answer["token"] not in invite.token_hash
    # The token opens the invite (4.6) ...
    lookup = api.get(f"{URL}/{answer['token']}")
    assert lookup.json() == {"email": answer["email"], "firstName": "Ada", "lastName": "Lovelace"}
    # ... and is never shown again.
    listed = api.get(URL, token=admin_member.token).json()["rows"]
    assert answer["token"] not in str(listed) and "token" not in listed[0]


def test_defaults_learner_no_courses(api, owner):
    answer = api.post(URL, body(), token=owner.token).json()
    assert (answer["role"], answer["courseIds"]) == ("learner", [])


def test_expires_at_within_ninety_days(api, owner):
    at = timezone.now() + timedelta(days=90) - timedelta(minutes=1)
    answer = api.post(URL, body(expiresAt=at.isoformat()), token=owner.token).json()
    assert parse_datetime(answer["expiresAt"]) == at


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"email": "not an address"}, "email"),
        ({"email": 5}, "email"),
        ({"email": None}, "email"),
        ({"firstName": ""}, "firstName"),
        ({"firstName": "   "}, "firstName"),
        ({"lastName": "x" * 151}, "lastName"),
        ({"lastName": 7}, "lastName"),
        ({"role": "boss"}, "role"),
        ({"courseIds": "nope"}, "courseIds"),
        ({"courseIds": ["nope"]}, "courseIds.0"),
        ({"courseIds": [str(uuid.uuid4()) for _ in range(101)]}, "courseIds"),
        ({"expiresAt": "yesterday"}, "expiresAt"),
        ({"expiresAt": "2001-01-01T00:00:00Z"}, "expiresAt"),
        ({"expiresAt": 12}, "expiresAt"),
        ({"sendEmail": "yes"}, "sendEmail"),
    ],
)
def test_a_bad_body_is_a_400_naming_the_field(api, owner, changes, field):
    response = api.post(URL, body(**changes), token=owner.token)
    assert field in assert_error(response, 400, "validation_error")["details"]
    assert not Invite.objects.for_org(owner.org).exists()


def test_an_expiry_past_ninety_days_is_a_400(api, owner):
    at = timezone.now() + timedelta(days=90, minutes=1)
    response = api.post(URL, body(expiresAt=at.isoformat()), token=owner.token)
    assert set(assert_error(response, 400, "validation_error")["details"]) == {"expiresAt"}


def test_missing_names_are_400(api, owner):
    response = api.post(URL, {"email": "a@example.com"}, token=owner.token)
    details = assert_error(response, 400, "validation_error")["details"]
    assert {"firstName", "lastName"} <= set(details)


def test_courses_not_of_the_organization_are_named_by_position(api, org, other_org, owner):
    mine = CourseFactory(org=org)
    foreign = CourseFactory(org=other_org)
    ids = [str(mine.id), str(foreign.id), str(uuid.uuid4()), str(mine.id)]
    response = api.post(URL, body(courseIds=ids), token=owner.token)
    details = assert_error(response, 400, "validation_error")["details"]
    assert set(details) == {"courseIds.1", "courseIds.2", "courseIds.3"}
    assert not Invite.objects.for_org(org).exists()


def test_send_email_without_an_invite_url_is_a_400(api, owner, settings):
    settings.LMS_INVITE_URL = ""
    response = api.post(URL, body(sendEmail=True), token=owner.token)
    assert set(assert_error(response, 400, "validation_error")["details"]) == {"sendEmail"}


def test_nobody_invites_above_their_own_role_and_only_after_the_body_is_valid(api, admin_member):
    denied = api.post(URL, body(role="owner"), token=admin_member.token)
    assert_error(denied, 403, "permission_denied")
    invalid = api.post(URL, body(role="owner", firstName=""), token=admin_member.token)
    assert_error(invalid, 400, "validation_error")
    assert api.post(URL, body(role="admin"), token=admin_member.token).status_code == 201
    assert not Invite.objects.for_org(admin_member.org).filter(role="owner").exists()


@pytest.mark.parametrize("role", [Role.INSTRUCTOR, Role.LEARNER])
def test_other_roles_may_not_invite_list_or_revoke(api, org, role):
    caller = make_member(org, role)
    invite, _ = make_invite(org)
    assert_error(api.post(URL, body(), token=caller.token), 403, "permission_denied")
    assert_error(api.get(URL, token=caller.token), 403, "permission_denied")
    assert_error(api.post(revoke_url(invite.id), token=caller.token), 403, "permission_denied")


def test_unauthenticated_is_401(api, org):
    invite, _ = make_invite(org)
    assert_error(api.post(URL, body()), 401, "unauthenticated")
    assert_error(api.get(URL), 401, "unauthenticated")
    assert_error(api.post(revoke_url(invite.id)), 401, "unauthenticated")


def test_a_pending_invite_to_the_same_address_in_any_case_is_a_409(api, org, owner):
    make_invite(org, email="ada.lovelace@example.com")
    response = api.post(URL, body(email="ADA.LOVELACE@example.com"), token=owner.token)
    assert set(assert_error(response, 409, "conflict")["details"]) == {"email"}


@pytest.mark.parametrize("status", ["expired", "revoked", "accepted"])
def test_an_invite_that_is_no_longer_pending_does_not_block_a_new_one(api, org, owner, status):
    make_invite(org, status, email="ada.lovelace@example.com")
    assert api.post(URL, body(), token=owner.token).status_code == 201


def test_a_member_with_the_address_is_a_409_but_not_in_another_organization(
    api, org, other_org, owner
):
    member = make_member(org, Role.LEARNER)
    response = api.post(URL, body(email=member.user.email.upper()), token=owner.token)
    assert set(assert_error(response, 409, "conflict")["details"]) == {"email"}
    outsider = make_member(other_org, Role.LEARNER)
    assert api.post(URL, body(email=outsider.user.email), token=owner.token).status_code == 201


def test_the_list_is_newest_first_paged_with_status_and_accepted_member(api, org, owner):
    course = CourseFactory(org=org)
    pending, _ = make_invite(org, email="p@example.com")
    expired, _ = make_invite(org, "expired", email="e@example.com")
    revoked, _ = make_invite(org, "revoked", email="r@example.com")
    accepted, raw = make_invite(org, email="a@example.com")
    InviteCourse.objects.create(org=org, invite=accepted, course=course, seq=1)
    member = api.post(f"{URL}/{raw}/accept").json()
    del member
    accepted.refresh_from_db()

    page = api.get(URL, token=owner.token).json()
    assert (page["total"], page["page"], page["pageSize"]) == (4, 1, 20)
    ids = [row["id"] for row in page["rows"]]
    assert ids == [str(i.id) for i in (accepted, revoked, expired, pending)]
    rows = {row["email"]: row for row in page["rows"]}
    assert set(rows["a@example.com"]) == ROW_KEYS | {"acceptedAt", "memberId"}
    assert rows["a@example.com"]["status"] == "accepted"
    assert rows["a@example.com"]["memberId"] == str(accepted.accepted_by_id)
    assert parse_datetime(rows["a@example.com"]["acceptedAt"]) == accepted.accepted_at
    assert rows["a@example.com"]["courseIds"] == [str(course.id)]
    assert (rows["p@example.com"]["memberId"], rows["p@example.com"]["acceptedAt"]) == (None, None)
    for status, invite in [
        ("pending", pending),
        ("expired", expired),
        ("revoked", revoked),
        ("accepted", accepted),
    ]:
        page = api.get(URL, token=owner.token, query={"status": status}).json()
        assert [row["id"] for row in page["rows"]] == [str(invite.id)], status
        assert page["rows"][0]["status"] == status and page["total"] == 1

    second = api.get(URL, token=owner.token, query={"page": 2, "pageSize": 3}).json()
    assert [row["id"] for row in second["rows"]] == [str(pending.id)]


@pytest.mark.parametrize(
    "query",
    [{"status": "done"}, {"status": ""}, {"page": 0}, {"pageSize": 101}, {"page": "x"}],
)
def test_a_bad_query_is_a_400(api, owner, query):
    response = api.get(URL, token=owner.token, query=query)
    assert set(assert_error(response, 400, "validation_error")["details"]) == set(query)


def test_the_list_is_the_callers_organization_only(api, org, other_org, owner):
    make_invite(other_org)
    assert api.get(URL, token=owner.token).json() == {
        "rows": [],
        "total": 0,
        "page": 1,
        "pageSize": 20,
    }


def test_the_list_costs_the_same_queries_for_many_invites(
    api, org, owner, django_assert_max_num_queries
):
    courses = [CourseFactory(org=org) for _ in range(3)]
    for n in range(25):
        invite, _ = make_invite(org, email=f"p{n}@example.com")
        for seq, course in enumerate(courses, start=1):
            InviteCourse.objects.create(org=org, invite=invite, course=course, seq=seq)
    for query in ({}, {"page": 2}, {"status": "pending", "pageSize": 100}):
        with django_assert_max_num_queries(5):
            assert api.get(URL, token=owner.token, query=query).status_code == 200


def test_creating_costs_the_same_queries_for_many_courses(
    api, org, owner, django_assert_max_num_queries
):
    ids = [str(CourseFactory(org=org).id) for _ in range(100)]
    with django_assert_max_num_queries(14):
        assert api.post(URL, body(courseIds=ids), token=owner.token).status_code == 201
    assert InviteCourse.objects.for_org(org).count() == 100


def test_revoking_answers_the_invite_and_its_token_is_gone(api, org, owner):
    course = CourseFactory(org=org)
    created = api.post(URL, body(courseIds=[str(course.id)]), token=owner.token).json()
    response = api.post(revoke_url(created["id"]), token=owner.token)
    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["status"] == "revoked" and answer["courseIds"] == [str(course.id)]
    assert set(answer) == ROW_KEYS | {"acceptedAt", "memberId"}
    token = created["token"]
    assert_error(api.get(f"{URL}/{token}"), 410, "invite_unavailable")
    assert_error(api.post(f"{URL}/{token}/accept"), 410, "invite_unavailable")


@pytest.mark.parametrize("status", ["expired", "revoked", "accepted"])
def test_revoking_an_invite_that_is_not_pending_is_a_409(api, org, owner, status):
    invite, _ = make_invite(org, status)
    assert_error(api.post(revoke_url(invite.id), token=owner.token), 409, "conflict")
    invite.refresh_from_db()
    assert invite.status == status


def test_revoking_a_foreign_unknown_or_malformed_invite_is_a_404(api, other_org, owner):
    foreign, _ = make_invite(other_org)
    assert_foreign_looks_missing(
        api, "POST", revoke_url(foreign.id), revoke_url(uuid.uuid4()), token=owner.token
    )
    assert_error(api.post(revoke_url("nope"), token=owner.token), 404, "not_found")
    foreign.refresh_from_db()
    assert foreign.status == "pending"


@pytest.mark.django_db(transaction=True)
def test_over_real_http_invite_list_and_revoke(live_server, org):
    live = LiveApi(live_server.url)
    owner = make_member(org, Role.OWNER)
    course = CourseFactory(org=org, published=False)
    created = live.post(URL, body(courseIds=[str(course.id)]), token=owner.token)
    assert created.status == 201, created.body
    invite = created.json()
    assert live.post(URL, body(), token=owner.token).status == 409
    listed = live.get(URL, token=owner.token, query={"status": "pending"}).json()
    assert [row["id"] for row in listed["rows"]] == [invite["id"]]
    revoked = live.post(revoke_url(invite["id"]), token=owner.token)
    assert (revoked.status, revoked.json()["status"]) == (200, "revoked")
    assert live.post(revoke_url(invite["id"]), token=owner.token).status == 409
    assert live.get(f"{URL}/{invite['token']}").status == 410


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_of_simultaneous_invites_to_one_address_one_is_made(org):
    owner = make_member(org, Role.OWNER)
    emails = ["grace@example.com", "GRACE@example.com", "Grace@Example.com", "grace@EXAMPLE.com"]
    statuses = at_once(
        [
            (lambda client, email=email: client.post(URL, body(email=email), token=owner.token))
            for email in emails
        ]
    )
    assert sorted(response.status_code for response in statuses) == [201, 409, 409, 409]
    assert Invite.objects.for_org(org).count() == 1


@pytest.mark.parametrize("raw", ["[]", '"x"', "null", "{", "[{}]"])
def test_a_body_that_is_no_object_is_a_400(api, owner, learner, raw):
    for url in (URL, f"/api/organizations/members/{learner.membership.id}/tokens"):
        response = api.post(url, raw=raw, token=owner.token)
        assert response.status_code == 400, (url, response.content)
        assert response.json()["error"] in ("validation_error", "malformed_request")
    assert not Invite.objects.for_org(owner.org).exists()
