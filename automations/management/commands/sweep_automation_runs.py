import time

from django.core.management.base import BaseCommand

from automations.runs import sweep_runs


class Command(BaseCommand):
    help = (
        "Enqueue the automation runs that are overdue by a lease: their worker died mid-run, "
        "or their hand-off to the worker was lost. Once, or every --every seconds."
    )

    def add_arguments(self, parser):
        parser.add_argument("--every", type=float, default=0, help="Repeat every N seconds.")

    def handle(self, *args, every: float, **options):
        while True:
            count = sweep_runs()
            if count or not every:
                self.stdout.write(f"Enqueued {count} overdue run(s).")
            if not every:
                return
            try:
                time.sleep(every)
            except KeyboardInterrupt:  # Ctrl-C in `make run`: nothing is half done here
                return
