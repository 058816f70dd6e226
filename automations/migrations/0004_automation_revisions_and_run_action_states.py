"""Runs refer to an immutable revision of their automation's actions instead of copying
them, and each action's outcome gets a row of its own (CONTRACT 8.9); ``enqueued_at`` lets
the sweep leave alone a run whose task still waits in the queue. The next migration moves
the existing runs over; the one after drops the copied actions."""

import django.db.models.deletion
import django.db.models.manager
from django.db import migrations, models

import lms.ids


class Migration(migrations.Migration):
    dependencies = [
        ("automations", "0003_automation_runs"),
        ("organizations", "0005_throttle_window_unlogged"),
    ]

    operations = [
        migrations.AddField(
            model_name="automationrun",
            name="enqueued_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name="AutomationRevision",
            fields=[
                (
                    "id",
                    models.UUIDField(
                        default=lms.ids.uuid7, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("digest", models.CharField(max_length=64)),
                ("actions", models.JSONField(default=list)),
                ("types", models.JSONField(default=list)),
                (
                    "automation",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="revisions",
                        to="automations.automation",
                    ),
                ),
                (
                    "org",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="organizations.organization",
                    ),
                ),
            ],
            managers=[
                ("all_orgs", django.db.models.manager.Manager()),
            ],
        ),
        migrations.AddField(
            model_name="automation",
            name="revision",
            field=models.ForeignKey(
                db_index=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="automations.automationrevision",
            ),
        ),
        migrations.AddField(
            model_name="automationrun",
            name="revision",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="automations.automationrevision",
            ),
        ),
        migrations.CreateModel(
            name="AutomationRunAction",
            fields=[
                (
                    "id",
                    models.UUIDField(
                        default=lms.ids.uuid7, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("index", models.PositiveSmallIntegerField()),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("running", "Running"),
                            ("succeeded", "Succeeded"),
                            ("failed", "Failed"),
                            ("skipped", "Skipped"),
                        ],
                        default="pending",
                        max_length=16,
                    ),
                ),
                ("attempts", models.PositiveSmallIntegerField(default=0)),
                ("last_error", models.TextField(blank=True, default="")),
                ("response", models.JSONField(blank=True, null=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "org",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="organizations.organization",
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="action_states",
                        to="automations.automationrun",
                    ),
                ),
            ],
            managers=[
                ("all_orgs", django.db.models.manager.Manager()),
            ],
        ),
        migrations.AddConstraint(
            model_name="automationrevision",
            constraint=models.UniqueConstraint(
                fields=("automation", "digest"), name="automation_revision_once"
            ),
        ),
        migrations.AddConstraint(
            model_name="automationrunaction",
            constraint=models.UniqueConstraint(
                fields=("run", "index"), name="automation_run_action_once"
            ),
        ),
    ]
