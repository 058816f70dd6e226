from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("learn", "0005_enrollment_member_recent_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="enrollment",
            name="due_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
