"""The throttle's windows skip the write-ahead log on PostgreSQL (``ThrottleWindow`` says
what that costs); nothing changes elsewhere."""

from django.db import migrations


def _alter(persistence: str):
    def alter(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        table = schema_editor.quote_name(
            apps.get_model("organizations", "ThrottleWindow")._meta.db_table
        )
        schema_editor.execute(f"ALTER TABLE {table} SET {persistence}")

    return alter


class Migration(migrations.Migration):
    dependencies = [
        ("organizations", "0004_tenant_managers_fail_closed"),
    ]

    operations = [
        migrations.RunPython(_alter("UNLOGGED"), _alter("LOGGED"), elidable=False),
    ]
