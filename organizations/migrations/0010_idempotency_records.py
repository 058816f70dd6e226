"""The remembered answers to an ``Idempotency-Key`` are identity's: learn's
``IdempotencyRecord`` becomes ``organizations.IdempotencyRecord`` (its table, rows and name
stay: only the migrations' state moves, with learn 0010), where an invite accept's answer is
kept too, under the membership it made; an index serves the purge of those.

Safe before the new code: the running release reads and writes the same table."""

import django.db.models.deletion
import django.db.models.manager
from django.db import migrations, models

import lms.ids


class Migration(migrations.Migration):
    dependencies = [
        ("organizations", "0009_member_list_keys"),
        # The table is learn 0001's; no later learn migration is needed, so that taking learn
        # back (a test of its own migrations does) leaves this one applied.
        ("learn", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="IdempotencyRecord",
                    fields=[
                        (
                            "id",
                            models.UUIDField(
                                default=lms.ids.uuid7,
                                editable=False,
                                primary_key=True,
                                serialize=False,
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("key", models.CharField(max_length=255)),
                        ("response_status", models.PositiveSmallIntegerField()),
                        ("response_body", models.JSONField()),
                        (
                            "membership",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="organizations.membership",
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
                    options={
                        "db_table": "learn_idempotencyrecord",
                        "indexes": [
                            models.Index(
                                fields=["org", "membership", "created_at"],
                                name="idempotency_org_created",
                            )
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("org", "membership", "key"),
                                name="idempotency_org_member_key",
                            )
                        ],
                    },
                    managers=[
                        ("all_orgs", django.db.models.manager.Manager()),
                    ],
                ),
            ],
            database_operations=[],
        ),
        migrations.AddIndex(
            model_name="idempotencyrecord",
            index=models.Index(
                condition=models.Q(("key__startswith", "invite-accept ")),
                fields=["created_at"],
                name="idempotency_invite_created",
            ),
        ),
    ]
