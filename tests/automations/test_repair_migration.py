"""The data migration that repairs action inputs stored before save-time validation checked
every text and wrote ids lower-case: run forward over such rows, it leaves each one as the
API and the admin can render and recognise; rows already valid are not written."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from automations.models import Automation
from tests.automations.factories import AutomationFactory, welcome_email
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


def test_the_repair_migration_makes_stored_inputs_renderable_and_ids_lower_case(api, owner):
    org = owner.org
    call_command("migrate", "automations", before_repair(), verbosity=0)
    try:
        course = CourseFactory(org=org)
        upper = AutomationFactory(
            org=org,
            actions=[{"type": "enroll_in_course", "input": {"courseId": str(course.id).upper()}}],
        )
        valid = AutomationFactory(org=org)
        stamp = Automation.all_orgs.get(id=valid.id).updated_at
        broken = None
        if SQLITE:  # PostgreSQL's jsonb refuses both characters: no such row can exist there
            hook = {"url": "https://h.example.com/\x00x", "headers": {"X-A": "a\ud800b"}}
            broken = AutomationFactory(
                org=org,
                actions=[welcome_email(subject="Hi \udfff"), {"type": "webhook", "input": hook}],
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
