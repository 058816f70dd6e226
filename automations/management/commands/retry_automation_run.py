from django.core.management.base import BaseCommand, CommandError

from automations.models import AutomationRun
from automations.runs import retry_run
from lms.ids import parse_id


class Command(BaseCommand):
    help = "Run a failed automation run again from its failed action, with fresh attempts."

    def add_arguments(self, parser):
        parser.add_argument("run_id", help="The run's id.")

    def handle(self, *args, run_id: str, **options):
        run_uuid = parse_id(run_id)
        run = AutomationRun.objects.across_orgs().filter(id=run_uuid).first() if run_uuid else None
        if run is None:
            raise CommandError(f"No automation run {run_id}.")
        if run.status != AutomationRun.Status.FAILED:
            raise CommandError(f"Run {run_id} is {run.status}; only a failed run is retried.")
        retry_run(run)
        self.stdout.write(f"Run {run_id} is pending again.")
