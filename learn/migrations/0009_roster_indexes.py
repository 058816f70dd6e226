"""The roster's indexes (learn.models._roster_index), and on PostgreSQL the descending
order of each nullable sort key with its nulls last, and the trigram index of its search.

The trigram index starts with the organization and the course (``btree_gin``, as the
bundles' search index), so a search reads only its course's matches."""

from django.db import migrations, models

import lms.db.collation
from lms.db.migration_operations import RunSQLOn

_FILTERED = '"membership_id" DESC, "id", "stage", "due_at"'


def _descending(key: str) -> RunSQLOn:
    name = f"roster_{key}_desc"[:30]
    return RunSQLOn(
        "postgresql",
        f'CREATE INDEX "{name}" ON "learn_enrollment" ("org_id", "course_id",'
        f' "{key}" DESC NULLS LAST, {_FILTERED})',
        f'DROP INDEX "{name}"',
    )


class Migration(migrations.Migration):
    dependencies = [
        ("learn", "0008_enrollment_standing"),
        ("organizations", "0006_invite_accept_replays"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="enrollment",
            index=models.Index(
                models.F("org"),
                models.F("course"),
                models.F("stage"),
                models.F("membership"),
                models.F("id"),
                models.F("due_at"),
                name="roster_stage",
            ),
        ),
        migrations.AddIndex(
            model_name="enrollment",
            index=models.Index(
                models.F("org"),
                models.F("course"),
                models.F("created_at"),
                models.F("membership"),
                models.F("id"),
                models.F("stage"),
                models.F("due_at"),
                name="roster_created_at",
            ),
        ),
        migrations.AddIndex(
            model_name="enrollment",
            index=models.Index(
                models.F("org"),
                models.F("course"),
                models.F("done"),
                models.F("membership"),
                models.F("id"),
                models.F("stage"),
                models.F("due_at"),
                name="roster_done",
            ),
        ),
        migrations.AddIndex(
            model_name="enrollment",
            index=models.Index(
                models.F("org"),
                models.F("course"),
                lms.db.collation.CodePointOrder(models.F("email_key")),
                models.F("membership"),
                models.F("id"),
                models.F("stage"),
                models.F("due_at"),
                name="roster_email",
            ),
        ),
        migrations.AddIndex(
            model_name="enrollment",
            index=models.Index(
                models.F("org"),
                models.F("course"),
                models.F("completed_at"),
                models.F("membership"),
                models.F("id"),
                models.F("stage"),
                models.F("due_at"),
                name="roster_completed_at",
            ),
        ),
        migrations.AddIndex(
            model_name="enrollment",
            index=models.Index(
                models.F("org"),
                models.F("course"),
                models.F("due_at"),
                models.F("membership"),
                models.F("id"),
                models.F("stage"),
                name="roster_due_at",
            ),
        ),
        migrations.AddIndex(
            model_name="enrollment",
            index=models.Index(
                models.F("org"),
                models.F("course"),
                models.F("last_activity_at"),
                models.F("membership"),
                models.F("id"),
                models.F("stage"),
                models.F("due_at"),
                name="roster_last_activity_at",
            ),
        ),
        *(_descending(key) for key in ("completed_at", "due_at", "last_activity_at")),
        RunSQLOn(
            "postgresql",
            [
                "CREATE EXTENSION IF NOT EXISTS pg_trgm",
                "CREATE EXTENSION IF NOT EXISTS btree_gin",
                'CREATE INDEX "roster_search_trgm" ON "learn_enrollment"'
                ' USING gin ("org_id", "course_id", "search_text" gin_trgm_ops)',
            ],
            'DROP INDEX "roster_search_trgm"',
        ),
    ]
