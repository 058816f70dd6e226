"""The data migration that repairs action inputs stored before save-time validation checked
every text and wrote ids lower-case: run forward over such rows, it leaves each one as the
API and the admin can render and recognise; rows already valid are not written."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader

from automations.models import Automation, AutomationRevision
from tests.automations.factories import welcome_email
from tests.learn.factories import CourseFactory

pytestmark = pytest.mark.django_db(transaction=True)
SQLITE = connection.vendor == "sqlite"


def before_repair() -> str:
    """The automations migration before the repair, whatever their numbers."""
    loader = MigrationLoader(connection)
    [migration] = [
        migration
        for (app, name), migration in loader.disk_migrations.items()
        if app == "automations" and name.endswith("_repair_stored_action_inputs")
    ]
    [(_, parent)] = [dep for dep in migration.dependencies if dep[0] == "automations"]
    return parent


def stored_before(migration: str):
    """A function that stores an automation and its revision as the schema stood after
    ``migration`` (its historical models: columns added later do not exist yet)."""
    state = MigrationExecutor(connection).loader.project_state(("automations", migration))
    old = state.apps.get_model("automations", "Automation")
    old_revision = state.apps.get_model("automations", "AutomationRevision")
    names = iter(range(1000))

    def store(org, actions):
        automation = old.all_orgs.create(
            org_id=org.id,
            name=f"Stored {next(names)}",
            trigger="enrollment.created",
            actions=actions,
            signing_secret="whsec_c3RvcmVk",
        )
        revision = old_revision.all_orgs.create(
            org_id=org.id,
            automation_id=automation.id,
            digest=AutomationRevision.digest_of(actions),
            actions=actions,
            types=[action["type"] for action in actions],
        )
        old.all_orgs.filter(id=automation.id).update(revision_id=revision.id)
        return automation

    return store


def test_the_repair_migration_makes_stored_inputs_renderable_and_ids_lower_case(api, owner):
    org = owner.org
    call_command("migrate", "automations", before_repair(), verbosity=0)
    try:
        store = stored_before(before_repair())
        course = CourseFactory(org=org)
        upper = store(
            org, [{"type": "enroll_in_course", "input": {"courseId": str(course.id).upper()}}]
        )
        valid = store(org, [welcome_email()])
        stamp = Automation.all_orgs.only("updated_at").get(id=valid.id).updated_at
        broken = None
        if SQLITE:  # PostgreSQL's jsonb refuses both characters: no such row can exist there
            hook = {"url": "https://h.example.com/\x00x", "headers": {"X-A": "a\ud800b"}}
            broken = store(
                org, [welcome_email(subject="Hi \udfff"), {"type": "webhook", "input": hook}]
            )
    finally:
        call_command("migrate", "automations", verbosity=0)
    assert Automation.all_orgs.get(id=upper.id).actions[0]["input"]["courseId"] == str(course.id)
    revision = Automation.all_orgs.select_related("revision").get(id=upper.id).revision
    assert revision.actions[0]["input"]["courseId"] == str(course.id)
    assert Automation.all_orgs.get(id=valid.id).actions == [welcome_email()]
    assert Automation.all_orgs.get(id=valid.id).updated_at == stamp
    listed = api.get("/api/automations", token=owner.token)
    assert listed.status_code == 200 and listed.json()["total"] == 3 - (broken is None)
    if broken is not None:
        assert Automation.all_orgs.get(id=broken.id).actions == [
            welcome_email(subject="Hi \ufffd"),
            {
                "type": "webhook",
                "input": {"url": "https://h.example.com/x", "headers": {"X-A": "a\ufffdb"}},
            },
        ]
