"""Reads of this app worth a name."""

from __future__ import annotations

import uuid

from django.db.models import Min
from django.utils import timezone

from automations.models import Automation, AutomationRun
from lms.db.compiled import Compiled
from lms.db.wire import wire_columns

# What an automation's wire shape reads, by attribute name (AutomationSerializer's sources).
AUTOMATION_COLUMNS = (
    "org_id",
    "id",
    "name",
    "description",
    "trigger",
    "actions",
    "conditions",
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
    wire text (``lms.db.wire``; one query, its SQL compiled once per process). Malformed,
    unknown or foreign ids: NotFound."""
    row = _AUTOMATION.one_or_404(Automation, org_id=org_id, id=automation_id)
    return dict(zip(AUTOMATION_COLUMNS, row, strict=True))


def oldest_pending_run_seconds() -> float:
    """Seconds since the oldest unfinished run became due, across organizations: pending
    since it was recorded, or held past its worker's lease. 0 when every unfinished run has
    a worker or waits for its next attempt."""
    now = timezone.now()
    oldest = (
        AutomationRun.objects.across_orgs()
        .filter(status__in=(AutomationRun.Status.PENDING, AutomationRun.Status.RUNNING))
        .filter(due_at__lte=now)
        .aggregate(oldest=Min("due_at"))["oldest"]
    )
    return 0.0 if oldest is None else (now - oldest).total_seconds()
