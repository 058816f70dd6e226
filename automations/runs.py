"""Runs: recording one per enabled automation when an event happens, and executing them.

Recording happens inside the transaction of the event (``record_runs``, an ``lms.events``
receiver): at most one run per automation and event, handed to the task worker only once
that transaction commits. Executing happens in the worker (``automations.tasks``): a run is
taken under a lease, its actions run in order, a failed action is tried again later with
exponential backoff, and after its last attempt the run fails and the actions after it are
skipped. A worker that dies mid-run leaves the run due again once its lease ends; the sweep
(``sweep_runs``) enqueues such runs, and runs whose hand-off to the worker was lost.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from automations.models import Automation, AutomationRun
from automations.registry import TRIGGERS
from lms.events import Event
from lms.metrics import count_automation_run

logger = logging.getLogger(__name__)
Status = AutomationRun.Status

# An action of a run of this depth may still cause events; none deeper starts a run, so
# automations that cause each other's triggers stop.
MAX_DEPTH = 3
UNFINISHED = (Status.PENDING, Status.RUNNING)


def record_runs(event: Event) -> None:
    """One pending run per enabled automation of the event's organization and trigger, in
    the caller's transaction: two queries at most, whatever the number of automations, and
    one hand-off to the worker after the commit."""
    if event.type not in TRIGGERS or event.depth > MAX_DEPTH:
        return
    automations = list(
        Automation.objects.filter(org_id=event.org_id, trigger=event.type, enabled=True).only(
            "id", "actions"
        )
    )
    if not automations:
        return
    now = timezone.now()
    runs = [
        AutomationRun(
            org_id=event.org_id,
            automation_id=automation.id,
            trigger=event.type,
            event_id=event.id,
            occurred_at=event.occurred_at,
            event_data=event.data,
            depth=event.depth,
            actions=[fresh_action(action) for action in automation.actions],
            due_at=now,
        )
        for automation in automations
    ]
    AutomationRun.objects.bulk_create(runs, ignore_conflicts=True)
    run_ids = [str(run.id) for run in runs]
    transaction.on_commit(lambda: hand_off(run_ids), robust=True)


def fresh_action(action: dict) -> dict:
    return {
        "type": action["type"],
        "input": action["input"],
        "status": "pending",
        "attempts": 0,
        "lastError": None,
        "response": None,
    }


def hand_off(run_ids: list[str]) -> None:
    """Give new runs to the worker: one task, whatever their number (it fans out)."""
    from automations.tasks import start_runs

    enqueue(start_runs, run_ids=run_ids)


def enqueue(task, *, run_after: datetime | None = None, **kwargs) -> None:
    task.using(queue_name=settings.LMS_TASKS_QUEUE, run_after=run_after).enqueue(**kwargs)


def delay_before_attempt(attempt: int) -> float:
    """Seconds to wait before attempt ``attempt`` (2, 3, ...): the base, doubling."""
    return settings.LMS_AUTOMATION_RETRY_BASE_SECONDS * 2 ** (attempt - 2)


def _lease() -> timedelta:
    return timedelta(seconds=settings.LMS_AUTOMATION_LEASE_SECONDS)


def claim(run_id: uuid.UUID | str) -> AutomationRun | None:
    """The run, now held by this worker until its lease ends; None when it is finished, not
    due yet, or held by another worker (a duplicate hand-off is harmless; a task that comes
    early, from a machine whose clock is ahead, leaves the run to the sweep)."""
    now = timezone.now()
    with transaction.atomic():
        run = (
            AutomationRun.objects.across_orgs()
            .select_for_update()
            .filter(id=run_id, status__in=UNFINISHED, due_at__lte=now)
            .first()
        )
        if run is None:
            return None
        run.status = Status.RUNNING
        run.due_at = now + _lease()
        run.save(update_fields=["status", "due_at", "updated_at"])
    return run


def execute(run_id: uuid.UUID | str) -> None:
    """Run the actions of the run that are not done yet, in order (see the module)."""
    from automations.actions import perform

    run = claim(run_id)
    if run is None:
        return
    for index, action in enumerate(run.actions):
        if action["status"] == "succeeded":
            continue
        action.update(status="running", attempts=action["attempts"] + 1)
        run.due_at = timezone.now() + _lease()
        run.save(update_fields=["actions", "due_at", "updated_at"])
        outcome = perform(run, index)
        action.update(lastError=outcome.error, response=outcome.response)
        if outcome.error is None:
            action["status"] = "succeeded"
            continue
        if action["attempts"] < settings.LMS_AUTOMATION_ATTEMPTS:
            # Stays running, and so does the run, until the next attempt.
            run.due_at = timezone.now() + timedelta(
                seconds=delay_before_attempt(action["attempts"] + 1)
            )
            run.save(update_fields=["actions", "due_at", "updated_at"])
            from automations.tasks import execute_run

            enqueue(execute_run, run_after=run.due_at, run_id=str(run.id))
            return
        action["status"] = "failed"
        for later in run.actions[index + 1 :]:
            later["status"] = "skipped"
        _finish(run, Status.FAILED)
        return
    _finish(run, Status.SUCCEEDED)


def _finish(run: AutomationRun, status: str) -> None:
    run.status = status
    run.finished_at = timezone.now()
    run.save(update_fields=["actions", "status", "finished_at", "updated_at"])
    count_automation_run(run.trigger, status)


def sweep_runs() -> int:
    """Enqueue every unfinished run that is overdue by a lease (its worker died, or its
    hand-off was lost) and mark it due now, so that the next sweep leaves it a lease
    longer. How many."""
    now = timezone.now()
    overdue = list(
        AutomationRun.objects.across_orgs()
        .filter(status__in=UNFINISHED, due_at__lte=now - _lease())
        .values_list("id", flat=True)[:1000]
    )
    if not overdue:
        return 0
    AutomationRun.objects.across_orgs().filter(id__in=overdue).update(due_at=now)
    from automations.tasks import execute_run

    for run_id in overdue:
        enqueue(execute_run, run_id=str(run_id))
    return len(overdue)


def retry_run(run: AutomationRun) -> None:
    """Start a failed run again from its failed action, with fresh attempts."""
    with transaction.atomic():
        for action in run.actions:
            if action["status"] in ("failed", "skipped"):
                action.update(status="pending", attempts=0, lastError=None, response=None)
        run.status = Status.PENDING
        run.finished_at = None
        run.due_at = timezone.now()
        run.save(update_fields=["actions", "status", "finished_at", "due_at", "updated_at"])
        run_id = str(run.id)
        from automations.tasks import execute_run

        transaction.on_commit(lambda: enqueue(execute_run, run_id=run_id))
