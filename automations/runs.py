"""Runs: recording one per enabled automation when an event happens, and executing them.

Recording happens inside the transaction of the event (``record_runs``, an ``lms.events``
receiver): at most one run per automation and event, handed to the task worker only once
that transaction commits. Executing happens in the worker (``automations.tasks``, reached through
``automations.queue``): a run is
taken under a lease, its actions run in order, a failed action is tried again later with
exponential backoff, and after its last attempt the run fails and the actions after it are
skipped. A worker that dies mid-run leaves the run due again once its lease ends; the sweep
(``sweep_runs``) enqueues such runs, and runs whose hand-off to the worker was lost.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import DurationField, ExpressionWrapper, F, Q, Value
from django.db.models.lookups import LessThanOrEqual
from django.utils import timezone

from automations import queue
from automations.actions import perform
from automations.models import Automation, AutomationRun, AutomationRunAction
from automations.registry import CONDITIONS, TRIGGERS
from lms.db import statements
from lms.db.jsonsql import ListAllows
from lms.events import Event
from lms.ids import uuid7
from lms.ops.metrics import count_automation_run

logger = logging.getLogger(__name__)
Status = AutomationRun.Status
ActionStatus = AutomationRunAction.Status

# An action of a run of this depth may still cause events; none deeper starts a run, so
# automations that cause each other's triggers stop.
MAX_DEPTH = 3
UNFINISHED = (Status.PENDING, Status.RUNNING)
# An action in one of these states is not attempted again. (``skipped`` after a failure is
# deleted by a retry, so that the action runs again; see ``retry_run``.)
DONE = (ActionStatus.SUCCEEDED, ActionStatus.SKIPPED)


def record_runs(events: Sequence[Event]) -> None:
    """One pending run per enabled automation of an event's organization and trigger whose
    conditions the event meets (CONTRACT 8.7: matched in the same query), for each of the
    events one write made (an ``lms.events`` batch receiver), in the caller's transaction:
    per kind of event among them (organization, trigger and the values its conditions look
    at; an enrolment of many members in one course is one kind) one lookup, then one
    insert of every run and one hand-off to the worker after the commit, whatever the number
    of events, automations and conditions. A run row refers to its automation's current
    revision of the actions, never copies them: the event's request writes the run rows
    alone (CONTRACT 8.9)."""
    kinds: dict[tuple, list[Event]] = {}
    for event in events:
        if event.type in TRIGGERS and event.depth <= MAX_DEPTH:
            kinds.setdefault(_kind(event), []).append(event)
    now = timezone.now()
    rows = [
        (
            uuid7(),
            event.org_id,
            automation_id,
            revision_id,
            event.type,
            event.id,
            event.occurred_at,
            event.data,
            event.depth,
            now,
            now,  # enqueued_at: by the hand-off, right after the commit
        )
        for kind, alike in kinds.items()
        for automation_id, revision_id in _matching(*kind)
        for event in alike
    ]
    if not rows:
        return
    _INSERT_RUNS(rows)
    run_ids = [str(row[0]) for row in rows]
    transaction.on_commit(lambda: queue.start_runs(run_ids), robust=True)


# A run as ``record_runs`` writes it (every other column as the model fills it), all of a
# write's runs in one statement; a second run of an automation and event is left out.
_INSERT_RUNS = statements.Insert(
    AutomationRun,
    (
        "id",
        "org_id",
        "automation_id",
        "revision_id",
        "trigger",
        "event_id",
        "occurred_at",
        "event_data",
        "depth",
        "due_at",
        "enqueued_at",
    ),
    ignore_conflicts=True,
    batch=True,
)


def _kind(event: Event) -> tuple:
    """What decides which automations an event starts: its organization, trigger and the
    value of each condition of its trigger (lower-cased; an event without the id, which
    none of the trigger's should be, meets no condition on it)."""
    values = tuple(
        str(event.data.get(CONDITIONS[key].data_key) or "").lower()
        for key in TRIGGERS[event.type].conditions
    )
    return event.org_id, event.type, values


def _matching(org_id: uuid.UUID, trigger: str, values: tuple[str, ...]) -> list[tuple]:
    """(id, revision id) of the enabled automations of ``org_id`` and ``trigger`` whose
    conditions allow ``values``, in one query (a revision written now where one has none)."""
    matching = Automation.objects.filter(org_id=org_id, trigger=trigger, enabled=True)
    for key, value in zip(TRIGGERS[trigger].conditions, values, strict=True):
        matching = matching.filter(ListAllows("conditions", key, value))
    return [
        (automation_id, revision_id or revision_of(org_id, automation_id))
        for automation_id, revision_id in matching.values_list("id", "revision_id").order_by()
    ]


def revision_of(org_id: uuid.UUID, automation_id: uuid.UUID) -> uuid.UUID:
    """The revision of an automation that has none yet (one written around ``save``, as a
    bulk load does): its actions' revision, written now, once."""
    automation = Automation.objects.filter(org_id=org_id).get(id=automation_id)
    automation.save(update_fields=["actions"])
    return automation.revision_id


def delay_before_attempt(attempt: int) -> float:
    """Seconds to wait before attempt ``attempt`` (2, 3, ...): the base, doubling."""
    return settings.LMS_AUTOMATION_RETRY_BASE_SECONDS * 2 ** (attempt - 2)


def _lease() -> timedelta:
    return timedelta(seconds=settings.LMS_AUTOMATION_LEASE_SECONDS)


def claim() -> AutomationRun | None:
    """The run most due, with its revision, now held by this worker until its lease ends;
    None when no run is due (or every due one is held by another worker).

    A task names a run, but the worker takes the run that is most due, so that the order in
    which the task backend hands out tasks decides nothing (the database backend by
    ``run_after``, RQ in the order tasks reached its queue): a new run (``pending``) is
    taken before every retry, whatever the organization, so one organization's failing
    receivers never hold up another's new runs beyond the attempts already under way; a
    retry (or a run whose worker died) overdue by a lease is taken first of all, so a
    stream of new runs never starves retries. Within each kind the earliest due goes
    first. Every run waiting for a worker has a task of its own in the queue, so taking
    another run than the one named leaves the named one to the next task. Taking a run
    clears ``enqueued_at``: no task of it waits any more."""
    now = timezone.now()
    due = (
        AutomationRun.objects.across_orgs()
        .select_related("revision")
        .select_for_update(of=("self",), skip_locked=True)
        .filter(due_at__lte=now)
        .order_by("due_at")
    )
    with transaction.atomic():
        run = due.filter(status=Status.RUNNING).first()
        if run is None or run.due_at > now - _lease():
            run = due.filter(status=Status.PENDING).first() or run
        if run is None:
            return None
        run.status = Status.RUNNING
        run.due_at = now + _lease()
        run.enqueued_at = None
        run.save(update_fields=["status", "due_at", "enqueued_at", "updated_at"])
    return run


def _save_state(state: AutomationRunAction, *fields: str) -> None:
    """Write one action's outcome: its row's first write inserts it, later ones update
    only ``fields`` of it."""
    if state._state.adding:
        state.save(force_insert=True)
    else:
        state.save(update_fields=[*fields, "updated_at"])


def execute(run_id: uuid.UUID | str) -> None:
    """Run the actions not done yet of the run most due (``run_id``'s task is one hand-off
    to a worker; ``claim`` chooses the run), in order (see the module). Each attempt
    writes its action's row and the run's lease, never the other actions."""
    run = claim()
    if run is None:
        return
    states = {
        state.index: state
        for state in AutomationRunAction.objects.filter(org_id=run.org_id, run_id=run.id)
    }
    for index in range(len(run.revision.types)):
        state = states.get(index)
        if state is not None and state.status in DONE:
            continue
        if state is None:
            state = AutomationRunAction(org_id=run.org_id, run=run, index=index)
        now = timezone.now()
        state.status, state.attempts = ActionStatus.RUNNING, state.attempts + 1
        state.started_at, state.finished_at = now, None
        _save_state(state, "status", "attempts", "started_at", "finished_at")
        run.due_at = now + _lease()
        run.save(update_fields=["due_at", "updated_at"])
        outcome = perform(run, index)
        state.last_error, state.response = outcome.error or "", outcome.response
        if outcome.error is None:
            done = ActionStatus.SKIPPED if outcome.skipped else ActionStatus.SUCCEEDED
            state.status, state.finished_at = done, timezone.now()
            _save_state(state, "status", "last_error", "response", "finished_at")
            continue
        if state.attempts < settings.LMS_AUTOMATION_ATTEMPTS:
            # Stays running, and so does the run, until the next attempt.
            _save_state(state, "last_error", "response")
            run.due_at = timezone.now() + timedelta(
                seconds=delay_before_attempt(state.attempts + 1)
            )
            run.enqueued_at = timezone.now()
            run.save(update_fields=["due_at", "enqueued_at", "updated_at"])
            queue.execute_run(str(run.id), run_after=run.due_at)
            return
        state.status, state.finished_at = ActionStatus.FAILED, timezone.now()
        _save_state(state, "status", "last_error", "response", "finished_at")
        AutomationRunAction.objects.bulk_create(
            [
                AutomationRunAction(
                    org_id=run.org_id, run=run, index=later, status=ActionStatus.SKIPPED
                )
                for later in range(index + 1, len(run.revision.types))
            ],
            ignore_conflicts=True,
        )
        _finish(run, Status.FAILED)
        return
    _finish(run, Status.SUCCEEDED)


def _finish(run: AutomationRun, status: str) -> None:
    run.status = status
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at", "updated_at"])
    count_automation_run(run.trigger, status)


def sweep_runs() -> int:
    """Enqueue the unfinished runs that are overdue by a lease (their worker died, or their
    hand-off was lost), 1,000 at most per call; how many.

    A run whose last task no worker has taken yet (``enqueued_at`` set: the worker lags, or
    the task was lost) is enqueued again only once it has waited in the queue at least a
    lease and at least as long as the run had been overdue when that task was enqueued: the
    intervals double while no worker takes the run, so a lagging worker does not find the
    queue filled with copies of the same runs, and a lost task is still replaced. Each run
    is marked in the same statement that chooses it, so sweeps that run at the same time
    never enqueue one run twice."""
    now = timezone.now()
    lease = _lease()
    waited = ExpressionWrapper(Value(now) - F("enqueued_at"), output_field=DurationField())
    late_when_enqueued = ExpressionWrapper(
        F("enqueued_at") - F("due_at"), output_field=DurationField()
    )
    overdue = (
        AutomationRun.objects.across_orgs()
        .filter(status__in=UNFINISHED, due_at__lte=now - lease)
        .filter(
            Q(enqueued_at__isnull=True)
            | Q(enqueued_at__lte=now - lease) & Q(LessThanOrEqual(late_when_enqueued, waited))
        )
    )
    chosen = overdue.filter(id__in=overdue.values("id")[:1000]).update(enqueued_at=now)
    if not chosen:
        return 0
    marked = list(
        AutomationRun.objects.across_orgs()
        .filter(status__in=UNFINISHED, enqueued_at=now)
        .values_list("id", flat=True)
    )
    for run_id in marked:
        queue.execute_run(str(run_id))
    return len(marked)


def retry_run(run: AutomationRun) -> None:
    """Start a failed run again from its failed action, with fresh attempts: the rows of
    its failed and skipped actions go, so those actions are pending again."""
    with transaction.atomic():
        AutomationRunAction.objects.filter(
            org_id=run.org_id,
            run_id=run.id,
            status__in=[ActionStatus.FAILED, ActionStatus.SKIPPED],
        ).delete()
        run.status = Status.PENDING
        run.finished_at = None
        run.due_at = run.enqueued_at = timezone.now()
        run.save(update_fields=["status", "finished_at", "due_at", "enqueued_at", "updated_at"])
        run_id = str(run.id)
        transaction.on_commit(lambda: queue.execute_run(run_id))
