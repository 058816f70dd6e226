"""Text a client sent, echoed in an error (an unknown key in ``details``, a value quoted in a
message), always renders: a lone surrogate, which UTF-8 cannot write, is answered as its
``\\udXXX`` escape, on every route, authenticated or not."""

from __future__ import annotations

import pytest

from tests.automations.factories import welcome_email
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db


def test_an_unknown_key_with_a_lone_surrogate_is_a_400_on_automation_create(api, owner):
    action = welcome_email()
    action["input"]["\ud800cc"] = "x"
    body = {"name": "Welcome", "trigger": "enrollment.created", "actions": [action]}
    error = assert_error(
        api.post("/api/automations", body, token=owner.token), 400, "validation_error"
    )
    assert set(error["details"]) == {"actions.0.input.\\ud800cc"}
    assert "\\ud800cc" in error["message"]


def test_an_unknown_key_with_a_lone_surrogate_is_a_400_on_the_public_invite_accept(api):
    response = api.post("/api/organizations/invites/no-such-token/accept", {"\udfffkey": 1})
    error = assert_error(response, 400, "validation_error")
    assert set(error["details"]) == {"\\udfffkey"}


def test_a_quoted_value_with_a_lone_surrogate_renders(api, owner):
    body = {"name": "Welcome", "trigger": "enrollment.\udc00", "actions": [welcome_email()]}
    error = assert_error(
        api.post("/api/automations", body, token=owner.token), 400, "validation_error"
    )
    assert "enrollment.\\udc00" in error["details"]["trigger"][0]
