"""The automations' work for the task framework's worker (the Django tasks API), registered
with ``automations.queue`` so that the runs enqueue it without importing this module."""

from django.conf import settings
from django_tasks import task

from automations import queue, runs


@queue.register
@task(queue_name=settings.LMS_TASKS_QUEUE)
def start_runs(run_ids: list[str]) -> None:
    """New runs of one event: one task each, so that several workers share them."""
    for run_id in run_ids:
        queue.execute_run(run_id)


@queue.register
@task(queue_name=settings.LMS_TASKS_QUEUE)
def execute_run(run_id: str) -> None:
    runs.execute(run_id)
