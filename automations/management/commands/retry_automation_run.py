from django.core.management.base import BaseCommand, CommandError

from automations import services
from automations.models import AutomationRun
from lms.errors import ApiError
from lms.ids import parse_id


class Command(BaseCommand):
    help = (
        "Run a failed automation run again from its first action that did not succeed, with "
        "fresh attempts (the service behind POST /api/automations/{id}/runs/{runId}/retry)."
    )

    def add_arguments(self, parser):
        parser.add_argument("run_id", help="The run's id.")

    def handle(self, *args, run_id: str, **options):
        run_uuid = parse_id(run_id)
        run = (
            AutomationRun.objects.across_orgs().select_related("org").filter(id=run_uuid).first()
            if run_uuid
            else None
        )
        if run is None:
            raise CommandError(f"No automation run {run_id}.")
        try:
            services.retry_run(org=run.org, automation_id=run.automation_id, run_id=run.id)
        except ApiError as exc:
            raise CommandError(f"Run {run_id}: {exc.message}") from None
        self.stdout.write(f"Run {run_id} is pending again.")
