"""A run's actions are its revision's now (0005 moved them): the copy goes."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("automations", "0005_move_run_actions_to_revisions_and_states")]

    operations = [
        migrations.RemoveField(model_name="automationrun", name="actions"),
        migrations.AlterField(
            model_name="automationrun",
            name="revision",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="automations.automationrevision",
            ),
        ),
    ]
