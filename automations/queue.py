"""The hand-off of runs to the task worker, between ``automations.runs`` (the domain: record,
execute, sweep, retry) and ``automations.tasks`` (the tasks the worker imports by path).

The tasks call into the runs, and the runs enqueue the tasks: so that neither imports the
other, ``automations.tasks`` registers its tasks here when it is imported (the app's
``ready`` imports it), and the runs enqueue through the two functions below. This module
imports neither.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

_tasks: dict[str, object] = {}


def register(task):
    """Make ``task`` the one the runs enqueue under its function's name; answers it, so that
    it can decorate the task."""
    _tasks[task.name] = task
    return task


def _enqueue(name: str, *, run_after: datetime | None = None, **kwargs) -> None:
    try:
        task = _tasks[name]
    except KeyError:
        raise LookupError(
            f"No task {name!r} is registered: automations.tasks registers it when imported "
            "(AutomationsConfig.ready)."
        ) from None
    if run_after is None and settings.LMS_TASKS_BACKEND == "database":
        # Due now: without it the database backend stores the latest possible time, and
        # hands the task out after every due retry. (RQ queues a task without one at once;
        # with one, it waits for its scheduler.)
        run_after = timezone.now()
    task.using(queue_name=settings.LMS_TASKS_QUEUE, run_after=run_after).enqueue(**kwargs)


def start_runs(run_ids: list[str]) -> None:
    """Give new runs to the worker: one task, whatever their number (it fans out)."""
    _enqueue("start_runs", run_ids=run_ids)


def execute_run(run_id: str, *, run_after: datetime | None = None) -> None:
    """Have the worker execute one run, now or from ``run_after``."""
    _enqueue("execute_run", run_after=run_after, run_id=run_id)


def prune_results(batch: int = 5000) -> int:
    """Delete what the database backend keeps of tasks finished more than
    ``LMS_TASK_RESULTS_KEEP_SECONDS`` ago, ``batch`` rows at most; how many (the sweep calls
    it each time, so a burst of tasks is gone within a few sweeps). RQ expires its own."""
    if settings.LMS_TASKS_BACKEND != "database":
        return 0
    from django_tasks_db.models import DBTaskResult

    before = timezone.now() - timedelta(seconds=settings.LMS_TASK_RESULTS_KEEP_SECONDS)
    old = DBTaskResult.objects.finished().filter(finished_at__lt=before)
    ids = list(old.values_list("id", flat=True)[:batch])
    return DBTaskResult.objects.filter(id__in=ids).delete()[0] if ids else 0
