"""Creates and renames racing for one name (PostgreSQL, real threads): one wins, every other
answers 409 conflict naming ``name`` (CONTRACT 7.1), never a 500."""

from __future__ import annotations

import pytest

from automations.models import Automation
from tests.automations.factories import AutomationFactory, welcome_email
from tests.helpers import assert_error, at_once

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
URL = "/api/automations"
ROUNDS = 6
RACERS = 6


def body(name: str, enabled: bool = True) -> dict:
    return {
        "name": name,
        "trigger": "enrollment.created",
        "actions": [welcome_email()],
        "enabled": enabled,
    }


def assert_one_won(responses, won: int) -> None:
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [won] + [409] * (len(responses) - 1), [
        (r.status_code, r.content[:200]) for r in responses
    ]
    for response in responses:
        if response.status_code == 409:
            assert set(assert_error(response, 409, "conflict")["details"]) == {"name"}


# Enabled ones take a place among their trigger's (CONTRACT 8.9) and wait for each other
# on the organization; disabled ones meet only at the unique index.
@pytest.mark.parametrize("enabled", [True, False])
def test_creates_racing_for_one_name_make_one_automation_and_409s(owner, enabled):
    for round_ in range(ROUNDS):
        name = f"Welcome {round_}"
        responses = at_once(
            [lambda api, n=name: api.post(URL, body(n, enabled), token=owner.token)] * RACERS
        )
        assert_one_won(responses, 201)
        assert Automation.objects.for_org(owner.org).filter(name=name).count() == 1


def test_renames_racing_for_one_name_rename_one_and_409_the_others(owner):
    for round_ in range(ROUNDS):
        name = f"Renamed {round_}"
        automations = [AutomationFactory(org=owner.org) for _ in range(RACERS)]
        responses = at_once(
            [
                lambda api, a=automation, n=name: api.request(
                    "PATCH", f"{URL}/{a.id}", {"name": n}, token=owner.token
                )
                for automation in automations
            ]
        )
        assert_one_won(responses, 200)
        assert Automation.objects.for_org(owner.org).filter(name=name).count() == 1
