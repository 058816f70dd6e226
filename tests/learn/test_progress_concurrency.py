"""Concurrent reports of one learner on one activity are serialized (PostgreSQL, real threads)."""

import pytest

from learn.models import Progress, ProgressReport
from tests.helpers import at_once

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

URL = "/api/learn/progress"


def post_at_once(bodies: list[dict], token: str, headers: list[dict] | None = None) -> list:
    """POST every body from its own thread, released together; the responses in order."""
    return at_once(
        [
            lambda client, i=i: client.post(
                URL, bodies[i], token=token, headers=headers[i] if headers else None
            )
            for i in range(len(bodies))
        ]
    )


def test_simultaneous_reports_lose_no_update(enrolled, make_activity, api):
    activity = make_activity({"type": "time", "minSeconds": 60})
    body = {"activity": str(activity.id), "reports": [{"type": "time", "seconds": 5}]}

    # The first reports of all: the progress row is created by one of them, race-free.
    responses = post_at_once([body] * 11, enrolled.token)

    assert [r.status_code for r in responses] == [200] * 11
    assert ProgressReport.all_orgs.filter(progress__activity=activity).count() == 11
    row = Progress.all_orgs.get(activity=activity, membership=enrolled.membership)
    assert (row.status, row.progress) == ("in-progress", 0.917)
    assert row.state["secondsMicros"] == 55_000_000
    # The answers were decided one after another: 5, 10, ... 55 seconds, each once.
    assert sorted(r.json()["progress"] for r in responses) == [
        round(5 * n / 60, 3) for n in range(1, 12)
    ]

    last = api.post(URL, body, token=enrolled.token)
    assert last.json() == {"status": "completed", "progress": 1.0, "remaining": None}
    assert ProgressReport.all_orgs.filter(progress__activity=activity).count() == 12


def test_simultaneous_retries_with_one_key_store_once(enrolled, make_activity):
    activity = make_activity({"type": "time", "minSeconds": 60})
    body = {"activity": str(activity.id), "reports": [{"type": "time", "seconds": 5}]}
    headers = [{"Idempotency-Key": "one-click"}] * 6

    responses = post_at_once([body] * 6, enrolled.token, headers)

    assert {r.status_code for r in responses} == {200}
    assert [r.json() for r in responses] == [
        {"status": "in-progress", "progress": 0.083, "remaining": {"seconds": 55}}
    ] * 6
    assert ProgressReport.all_orgs.filter(progress__activity=activity).count() == 1
