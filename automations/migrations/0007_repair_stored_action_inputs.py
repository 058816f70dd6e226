"""Stored automations' action inputs as save-time validation now keeps them.

Before it checked every text of an input, SQLite stored what no answer can render: a lone
surrogate (a client's "\\ud800" escape) in a subject, a body, a URL or a header value, or a
NUL in a URL, and from then on the automation and the organization's list answered 500.
(PostgreSQL refuses both in jsonb, so no such row exists there.) And an id in an input was
stored as sent, upper case included, which the admin's course picker did not recognise.

This repairs each such row in place: a lone surrogate becomes U+FFFD (what any UTF-8
decoder makes of it), a NUL is dropped, and ``courseId`` is written lower-case. Only rows
that change are written. Backwards it does nothing: the repaired text is what the rows
should have held, and the refused characters cannot be told apart from U+FFFD afterwards.
It reads no registry code on purpose, so that later changes to validation do not change
what this migration did.
"""

import re
import uuid

from django.db import migrations

_SURROGATE = re.compile("[\ud800-\udfff]")


def _repaired_text(value):
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value.replace("\x00", ""))
    if isinstance(value, dict):
        return {_repaired_text(k): _repaired_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_repaired_text(item) for item in value]
    return value


def _lower_id(value):
    try:
        return str(uuid.UUID(value)) if isinstance(value, str) and len(value) == 36 else value
    except ValueError:
        return value


def repaired_actions(actions):
    """``actions`` with every text storable and ids lower-case; the same list when valid."""
    repaired = _repaired_text(actions)
    for action in repaired if isinstance(repaired, list) else ():
        data = action.get("input") if isinstance(action, dict) else None
        if isinstance(data, dict) and "courseId" in data:
            data["courseId"] = _lower_id(data["courseId"])
    return repaired


def repair(apps, schema_editor):
    # The automations, and the revisions their runs perform (the digest stays: it names the
    # actions as they were saved, and a later save of the repaired ones writes their own).
    for model in ("Automation", "AutomationRevision"):
        rows = apps.get_model("automations", model)._base_manager.using(
            schema_editor.connection.alias
        )
        for row_id, actions in rows.values_list("id", "actions").iterator(chunk_size=500):
            repaired = repaired_actions(actions)
            if repaired != actions:
                rows.filter(id=row_id).update(actions=repaired)


class Migration(migrations.Migration):
    dependencies = [
        ("automations", "0006_drop_run_actions_copy"),
    ]

    operations = [
        migrations.RunPython(repair, migrations.RunPython.noop, elidable=True),
    ]
