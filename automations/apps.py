from django.apps import AppConfig


class AutomationsConfig(AppConfig):
    name = "automations"

    def ready(self) -> None:
        from automations import (
            schema,  # noqa: F401  (registers the OpenAPI extension)
            tasks,  # noqa: F401  (registers the runs' tasks: automations.queue)
        )
        from automations.registry import TRIGGER_NAMES
        from automations.runs import record_runs
        from automations.selectors import oldest_pending_run_seconds
        from lms.events import batch_receiver
        from lms.ops.logs import register_redaction
        from lms.ops.metrics import AUTOMATION_RUNS, gauge_at_scrape, start_at_zero

        batch_receiver(record_runs)
        # A signing secret is shown to its caller once and never written whole to a log.
        register_redaction(
            r"\b(whsec_[A-Za-z0-9+/]{4})[A-Za-z0-9+/=]{8,}", r"\1...", contains="whsec_"
        )
        start_at_zero(
            AUTOMATION_RUNS,
            *((trigger, status) for trigger in TRIGGER_NAMES for status in ("succeeded", "failed")),
        )
        gauge_at_scrape(
            "lms_automation_oldest_pending_seconds",
            "Seconds since the oldest run that is due and not finished became due (0: none): "
            "how far the automations' workers lag.",
            oldest_pending_run_seconds,
        )
