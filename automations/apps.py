from django.apps import AppConfig


class AutomationsConfig(AppConfig):
    name = "automations"

    def ready(self) -> None:
        from automations import schema  # noqa: F401  (registers the OpenAPI extension)
        from automations.runs import record_runs
        from automations.selectors import oldest_pending_run_seconds
        from lms.events import receiver
        from lms.metrics import gauge_at_scrape

        receiver(record_runs)
        gauge_at_scrape(
            "lms_automation_oldest_pending_seconds",
            "Seconds since the oldest run that is due and not finished became due (0: none): "
            "how far the automations' workers lag.",
            oldest_pending_run_seconds,
        )
