"""Domain reads of this app worth a name. Reads on hot paths answering the wire's text are
``automations.wire_reads``'."""

from __future__ import annotations

from django.db.models import Min
from django.utils import timezone

from automations.models import AutomationRun


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
