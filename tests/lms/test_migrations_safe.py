"""Migrations are safe to run before the new code is out (docs/operations.md, "Upgrading"):
while `migrate` runs and until every server runs the new release, the old code keeps
serving on the migrated schema. So a migration may add (a table, a nullable column or one
with a database default, an index) but not take away or rename what the old code reads and
writes, nor add a column the old code's inserts would leave NULL.

A migration that must (dropping a column the code stopped using a release ago) says so
with ``run_after_the_code = "<why>"``: the upgrade runs it once the new release is out
everywhere. The migrations before this rule are listed as they were."""

from __future__ import annotations

import pytest
from django.db import migrations
from django.db.migrations.loader import MigrationLoader
from django.db.models.fields import NOT_PROVIDED

OUR_APPS = {"organizations", "downloads", "learn", "bundles", "automations"}
# Written before the rule (most add a NOT NULL column with a default in Python only), each
# already applied: not checked again. Nothing is added here.
BEFORE_THE_RULE = {
    ("automations", "0003_automation_runs"),
    ("automations", "0006_drop_run_actions_copy"),
    ("automations", "0008_automation_conditions"),
    ("automations", "0009_automation_secret_rotation"),
    ("automations", "0010_automation_run_test_sends"),
    ("automations", "0012_automation_older_signing_secret"),
    ("learn", "0007_completions_feed"),
    ("learn", "0008_enrollment_standing"),
    ("organizations", "0007_invite_courses_and_list"),
    ("organizations", "0009_member_list_keys"),
}
TAKES_AWAY = (
    migrations.RemoveField,
    migrations.DeleteModel,
    migrations.RenameField,
    migrations.RenameModel,
    migrations.AlterModelTable,
)


def unsafe_operations(migration, state) -> list[str]:
    """What in ``migration`` would break the previous release's code, given the project's
    ``state`` before it (advanced through the migration as it is read)."""
    found = []
    for operation in migration.operations:
        if isinstance(operation, TAKES_AWAY):
            found.append(f"{operation.describe()}: the running code still uses it")
        elif isinstance(operation, migrations.AddField):
            field = operation.field
            if not field.null and field.db_default is NOT_PROVIDED and (not field.many_to_many):
                found.append(
                    f"{operation.describe()}: NOT NULL without a db_default, so the running "
                    "code's inserts fail"
                )
        elif isinstance(operation, migrations.AlterField):
            before = state.models[migration.app_label, operation.model_name_lower].fields.get(
                operation.name
            )
            field = operation.field
            if before is not None and before.null and not field.null:
                found.append(
                    f"{operation.describe()}: made NOT NULL while the running code may write NULL"
                )
        operation.state_forwards(migration.app_label, state)
    return found


def _ours() -> list[tuple[tuple[str, str], object]]:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return [
        (key, loader, migration)
        for key, migration in sorted(loader.disk_migrations.items())
        if key[0] in OUR_APPS
    ]


@pytest.mark.parametrize(("key", "loader", "migration"), _ours(), ids=lambda v: "")
def test_each_migration_is_safe_to_run_before_the_new_code(key, loader, migration):
    if key in BEFORE_THE_RULE or getattr(migration, "run_after_the_code", None):
        return
    state = loader.project_state(key, at_end=False)
    assert unsafe_operations(migration, state) == [], key


def test_the_check_refuses_what_the_running_code_would_trip_on():
    from django.db import models

    loader = MigrationLoader(None, ignore_no_migrations=True)
    leaf = loader.graph.leaf_nodes("bundles")[0]
    state = loader.project_state(leaf)

    class Unsafe(migrations.Migration):
        operations = [
            migrations.AddField("bundle", "colour", models.CharField(max_length=10)),
            migrations.AddField("bundle", "shade", models.CharField(max_length=10, null=True)),
            migrations.AddField(
                "bundle", "tone", models.CharField(max_length=10, db_default="plain")
            ),
            migrations.RemoveField("bundle", "name"),
        ]

    found = unsafe_operations(Unsafe("0999_unsafe", "bundles"), state)
    assert len(found) == 2 and "colour" in found[0] and "name" in found[1], found
