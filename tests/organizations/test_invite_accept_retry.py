"""7.3 accepting with an ``Idempotency-Key``: an accept that succeeded is answered again, the
same 201 with the same token, to the same key and invite token within 10 minutes; after that
the token's plain text is gone and the retry is 410."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection

from organizations.models import (
    INVITE_ACCEPT_KEY_PREFIX,
    ApiToken,
    IdempotencyRecord,
    Invite,
    Membership,
)
from tests.helpers import assert_error, at_once
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.django_db


def accept(api, token: str, key: str | None = None, **kwargs):
    headers = {} if key is None else {"Idempotency-Key": key}
    return api.post(f"/api/organizations/invites/{token}/accept", headers=headers, **kwargs)


# The remembered answers of invite accepts.
REPLAYS = IdempotencyRecord.all_orgs.filter(key__startswith=INVITE_ACCEPT_KEY_PREFIX)


def age_replays(by: timedelta) -> None:
    """Move the stored answers back in time, as the clock moving on would."""
    for replay in REPLAYS.all():
        REPLAYS.filter(pk=replay.pk).update(created_at=replay.created_at - by)


@pytest.fixture
def pending(org) -> tuple[Invite, str]:
    return make_invite(org)


def test_a_lost_201_is_answered_again_to_the_same_key(api, pending, recorded_events):
    invite, raw = pending
    first = accept(api, raw, "click-1")
    again = accept(api, raw, "click-1")

    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.content == first.content  # the same body, byte for byte
    assert "Idempotent-Replayed" not in first and again["Idempotent-Replayed"] == "true"
    assert again["Cache-Control"] == "no-store"
    # Accepted once: one token, one event; and the token answered again works.
    assert ApiToken.all_orgs.filter(membership__user__email=invite.email).count() == 1
    assert [event.type for event in recorded_events] == ["invite.accepted"]
    assert api.get("/api/bundles", token=again.json()["token"]).status_code == 200


def test_another_key_after_success_is_410(api, pending):
    _, raw = pending
    assert accept(api, raw, "click-1").status_code == 201
    body = assert_error(accept(api, raw, "click-2"), 410, "invite_unavailable")
    assert body["message"] == "This invite has already been accepted."
    assert_error(accept(api, raw), 410, "invite_unavailable")  # and without a key


def test_an_accept_without_a_key_is_not_answered_again(api, pending):
    _, raw = pending
    assert accept(api, raw).status_code == 201
    assert_error(accept(api, raw, "late-key"), 410, "invite_unavailable")
    assert not REPLAYS.exists()


def test_the_same_key_is_answered_for_10_minutes_then_410_and_the_answer_is_deleted(api, pending):
    _, raw = pending
    first = accept(api, raw, "click-1").json()
    age_replays(timedelta(minutes=9, seconds=59))
    assert accept(api, raw, "click-1").json() == first
    age_replays(timedelta(seconds=2))  # 10 minutes and 1 second old
    assert_error(accept(api, raw, "click-1"), 410, "invite_unavailable")
    assert not REPLAYS.exists()  # erased, not only hidden


def test_the_same_key_with_another_invite_token_replays_nothing(api, org):
    _, first = make_invite(org, email="first@example.com")
    _, second = make_invite(org, email="second@example.com")
    _, used = make_invite(org, "accepted", email="used@example.com")
    answered = accept(api, first, "shared-key").json()

    # A pending invite is accepted for itself: its own member, token and address.
    other = accept(api, second, "shared-key")
    assert other.status_code == 201 and "Idempotent-Replayed" not in other
    assert other.json()["email"] == "second@example.com"
    assert other.json()["token"] != answered["token"]
    # An accepted one and an unknown token answer as without the key.
    assert_error(accept(api, used, "shared-key"), 410, "invite_unavailable")
    assert_error(accept(api, first + "x", "shared-key"), 404, "not_found")
    assert_error(accept(api, first[:-1], "shared-key"), 404, "not_found")
    # The first invite's answer is still its own.
    assert accept(api, first, "shared-key").json() == answered
    assert REPLAYS.count() == 2


def test_the_stored_answer_holds_no_usable_token(api, pending):
    invite, raw = pending
    answered = accept(api, raw, "click-1").json()
    replay = REPLAYS.get()
    invite.refresh_from_db()
    assert replay.membership_id == invite.accepted_by_id and replay.org_id == invite.org_id
    stored = replay.response_body
    assert {key: value for key, value in stored.items() if key != "token"} == {
        key: value for key, value in answered.items() if key != "token"
    }
    token = answered["token"]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {IdempotencyRecord._meta.db_table}")
        row = " ".join(str(value) for value in cursor.fetchone())
    assert token not in row and token[len("lms_") :] not in row
    assert "click-1" not in row  # the key is kept as a hash


def test_an_answer_that_no_longer_opens_is_not_replayed(api, pending, settings):
    """Sealed with the server's secret: after a change of SECRET_KEY a retry is a 410, never
    a token that is not the one issued."""
    _, raw = pending
    assert accept(api, raw, "click-1").status_code == 201
    settings.SECRET_KEY = "another secret key, long enough to be one: " + "x" * 20
    assert_error(accept(api, raw, "click-1"), 410, "invite_unavailable")


def test_expired_answers_are_deleted_as_another_is_stored(api, org):
    _, first = make_invite(org, email="first@example.com")
    second_invite, second = make_invite(org, email="second@example.com")
    accept(api, first, "k1")
    age_replays(timedelta(minutes=10, seconds=1))
    accept(api, second, "k2")
    second_invite.refresh_from_db()
    assert list(REPLAYS.values_list("membership_id", flat=True)) == [second_invite.accepted_by_id]


@pytest.mark.parametrize("status, code", [("accepted", 410), ("revoked", 410), ("expired", 410)])
def test_a_failed_accept_stores_nothing(api, org, status, code):
    _, raw = make_invite(org, status)
    assert_error(accept(api, raw, "k"), code, "invite_unavailable")
    assert_error(accept(api, "inv_unknown", "k"), 404, "not_found")
    assert not REPLAYS.exists()


@pytest.mark.parametrize("key, ok", [("", False), ("x" * 256, False), ("x" * 255, True)])
def test_key_length_is_1_to_255(api, pending, key, ok):
    invite, raw = pending
    response = accept(api, raw, key)
    if ok:
        assert response.status_code == 201
    else:
        body = assert_error(response, 400, "validation_error")
        assert list(body["details"]) == ["Idempotency-Key"]
        invite.refresh_from_db()
        assert invite.state == "pending"


def test_keys_may_be_any_text(api, org):
    """A key is a hash once stored: odd characters are answered again like any other."""
    for n, key in enumerate(["\x00nul", "caf\udce9", " spaced ", "ü" * 255]):
        _, raw = make_invite(org, email=f"k{n}@example.com")
        first = accept(api, raw, key)
        assert first.status_code == 201, (key, first.content)
        assert accept(api, raw, key).json() == first.json()


def test_replays_count_toward_the_throttle(api, pending, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"invite_lookup": "3/min"},
    }
    _, raw = pending
    statuses = [accept(api, raw, "click-1").status_code for _ in range(4)]
    assert statuses == [201, 201, 201, 429]


# The throttle (one upsert), the answer's look-up, then in one
# savepoint the accept of test_invite_accept.py (in its own: the locked invite, the user, the
# membership, the token, the invite's update, the invite's courses (none here: nobody is
# enrolled), the automations' look-up), the purge of expired
# answers and the insert of this one. A replay: the throttle and the answer's look-up.
KEYED_ACCEPT_QUERIES = 23
REPLAY_QUERIES = 2


def test_query_counts_are_pinned(api, org, django_assert_num_queries):
    _, warm = make_invite(org, email="warm@example.com")
    accept(api, warm, "warm")  # the address's first request in the window also purges
    _, raw = make_invite(org)
    with django_assert_num_queries(KEYED_ACCEPT_QUERIES):
        assert accept(api, raw, "k").status_code == 201
    with django_assert_num_queries(REPLAY_QUERIES):
        assert accept(api, raw, "k").status_code == 201


def test_the_schema_documents_the_header(api):
    schema = api.get("/api/schema/", query={"format": "json"}).json()
    operation = schema["paths"]["/api/organizations/invites/{token}/accept"]["post"]
    [header] = [p for p in operation["parameters"] if p["in"] == "header"]
    assert header["name"] == "Idempotency-Key" and not header.get("required", False)
    assert header["schema"] == {"type": "string", "minLength": 1, "maxLength": 255}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_accepts_with_one_key_all_get_the_one_answer(org, recorded_events):
    invite, raw = make_invite(org)
    url = f"/api/organizations/invites/{raw}/accept"
    headers = {"Idempotency-Key": "double-click"}
    responses = at_once([lambda client: client.post(url, headers=headers)] * 4)

    assert [r.status_code for r in responses] == [201] * 4
    assert len({r.content for r in responses}) == 1
    assert sum(r.has_header("Idempotent-Replayed") for r in responses) == 3
    membership = Membership.all_orgs.get(user__email=invite.email)
    assert ApiToken.all_orgs.filter(membership=membership).count() == 1
    assert len(recorded_events) == 1
