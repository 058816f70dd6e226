"""Reads of this app worth a name."""

from __future__ import annotations

import uuid

from automations.models import Automation
from lms.compiled import Compiled
from lms.wire import wire_columns

# What an automation's wire shape reads, by attribute name (AutomationSerializer's sources).
AUTOMATION_COLUMNS = (
    "org_id",
    "id",
    "name",
    "description",
    "trigger",
    "actions",
    "enabled",
    "created_at",
    "updated_at",
)
_AUTOMATION = Compiled(
    lambda org_id, id: Automation.objects.filter(org_id=org_id, id=id).values_list(
        *wire_columns(Automation, AUTOMATION_COLUMNS)
    ),
    prepare=True,
)


def automation_fields(*, org_id: uuid.UUID, automation_id: object) -> dict:
    """The organization's automation as ``{attribute: value}``, its ids and timestamps as
    wire text (``lms.wire``; one query, its SQL compiled once per process). Malformed,
    unknown or foreign ids: NotFound."""
    row = _AUTOMATION.one_or_404(Automation, org_id=org_id, id=automation_id)
    return dict(zip(AUTOMATION_COLUMNS, row, strict=True))
