"""The invite accepts' own store of remembered answers goes: their answers are
``IdempotencyRecord``s now (0010). The answers still within their 10 minutes are carried
over, so a retry across the upgrade is answered again; the reverse brings back the empty
table (the answers it held were 10 minutes' worth)."""

import hashlib
import json
from datetime import timedelta

from django.db import migrations
from django.utils import timezone

# organizations.models.INVITE_ACCEPT_KEY_PREFIX, as it is at this migration.
PREFIX = "invite-accept "


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def carry_over(apps, schema_editor):
    replays = apps.get_model("organizations", "InviteReplay").all_orgs
    records = apps.get_model("organizations", "IdempotencyRecord").all_orgs
    recent = replays.filter(created_at__gte=timezone.now() - timedelta(minutes=10))
    for replay in recent.select_related("invite"):
        if replay.invite.accepted_by_id is None:
            continue
        # The key stored is a digest of the caller's, as organizations.views makes it.
        record, made = records.get_or_create(
            org_id=replay.org_id,
            membership_id=replay.invite.accepted_by_id,
            key=PREFIX + _digest(replay.invite.token_hash + " " + replay.key),
            defaults={
                "response_status": replay.response_status,
                "response_body": json.loads(replay.response_body),
            },
        )
        if made:
            records.filter(pk=record.pk).update(created_at=replay.created_at)


class Migration(migrations.Migration):
    run_after_the_code = "the running release stores and replays invite accepts' answers in it"

    dependencies = [
        ("organizations", "0010_idempotency_records"),
    ]

    operations = [
        migrations.RunPython(carry_over, migrations.RunPython.noop),
        migrations.DeleteModel(name="InviteReplay"),
    ]
