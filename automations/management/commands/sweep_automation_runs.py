import logging
import time

from django.core.management.base import BaseCommand
from django.db import InterfaceError, OperationalError, connections

from automations.queue import prune_results
from automations.runs import sweep_runs

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = (
        "Enqueue the automation runs that are overdue by a lease: their worker died mid-run, "
        "or their hand-off to the worker was lost; and delete the task results finished "
        "more than LMS_TASK_RESULTS_KEEP_SECONDS ago. Once, or every --every seconds (a "
        "sweep that cannot reach the database is tried again at the next one)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--every", type=float, default=0, help="Repeat every N seconds.")

    def handle(self, *args, every: float, **options):
        while True:
            try:
                count = sweep_runs()
                pruned = prune_results()
            except (OperationalError, InterfaceError) as exc:
                if not every:
                    raise
                # The database is down or restarting: its connection is dropped, and the
                # next sweep opens another.
                connections.close_all()
                logger.warning(
                    "The sweep could not reach the database; trying again in %g s: %s",
                    every,
                    " ".join(str(exc).split()),
                )
            else:
                if count or not every:
                    self.stdout.write(f"Enqueued {count} overdue run(s).")
                if pruned:
                    self.stdout.write(f"Deleted {pruned} finished task result(s).")
            if not every:
                return
            try:
                time.sleep(every)
            except KeyboardInterrupt:  # Ctrl-C in `make run`: nothing is half done here
                return
