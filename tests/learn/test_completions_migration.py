"""The migration that gives stored completions their feed positions: each organization's in
the order of their times (the id breaks a tie), and its sequence the last, so the next
completion follows them in the feed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader

from learn.models import CompletionSequence, CourseCompletion
from tests.factories import OrganizationFactory
from tests.helpers import make_member
from tests.learn.factories import ActivityFactory, CourseFactory, EnrollmentFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _before_feed() -> str:
    """The learn migration before the feed's, whatever their numbers."""
    loader = MigrationLoader(None)  # the files only: at import, without a database
    [migration] = [
        migration
        for (app, name), migration in loader.disk_migrations.items()
        if app == "learn" and name.endswith("_completions_feed")
    ]
    [(_, parent)] = [dep for dep in migration.dependencies if dep[0] == "learn"]
    return parent


BEFORE = _before_feed()
FEED = "/api/learn/completions"


def at(second: int) -> datetime:
    return datetime(2026, 11, 1, 9, 0, second, tzinfo=UTC)


def test_stored_completions_get_positions_in_the_order_of_their_times(api, org, owner):
    other = OrganizationFactory()
    course, theirs = CourseFactory(org=org), CourseFactory(org=other)
    learners = [make_member(org) for _ in range(4)]
    stranger = make_member(other)
    call_command("migrate", "learn", BEFORE, verbosity=0)
    try:
        state = MigrationExecutor(connection).loader.project_state(("learn", BEFORE))
        old = state.apps.get_model("learn", "CourseCompletion").all_orgs

        def store(member, course, second):
            return old.create(
                org_id=course.org_id,
                membership_id=member.membership.id,
                course_id=course.id,
                completed_at=at(second),
            ).id

        # Stored out of the order of their times; two at the same time.
        third = store(learners[0], course, 30)
        first = store(learners[1], course, 10)
        tied = sorted([store(learners[2], course, 20), store(learners[3], course, 20)])
        elsewhere = store(stranger, theirs, 5)
    finally:
        call_command("migrate", "learn", verbosity=0)

    positions = dict(CourseCompletion.all_orgs.values_list("id", "position"))
    assert [positions[id_] for id_ in (first, *tied, third)] == [1, 2, 3, 4]
    assert positions[elsewhere] == 1
    sequences = dict(CompletionSequence.all_orgs.values_list("org_id", "last"))
    assert sequences == {org.id: 4, other.id: 1}

    # The next completion follows them in the feed.
    newcomer = make_member(org)
    activity = ActivityFactory(module__course=course)
    EnrollmentFactory(course=course, membership=newcomer.membership)
    body = {"activity": str(activity.id), "reports": [{"type": "complete"}]}
    assert api.post("/api/learn/progress", body, token=newcomer.token).status_code == 200
    rows = api.get(FEED, token=owner.token).json()["rows"]
    assert [row["id"] for row in rows[:4]] == [str(id_) for id_ in (first, *tied, third)]
    assert [row["memberId"] for row in rows[4:]] == [str(newcomer.membership.id)]


def test_the_migration_reverses(org):
    call_command("migrate", "learn", BEFORE, verbosity=0)
    call_command("migrate", "learn", verbosity=0)
    assert not CompletionSequence.all_orgs.exists()
