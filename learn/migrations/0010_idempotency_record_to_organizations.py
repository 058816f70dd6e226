"""``IdempotencyRecord`` is identity's now (organizations 0010): only the state moves; the
table stays as it is."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("learn", "0009_roster_indexes"),
        ("organizations", "0010_idempotency_records"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="IdempotencyRecord")],
            database_operations=[],
        ),
    ]
