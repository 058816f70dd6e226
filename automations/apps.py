from django.apps import AppConfig


class AutomationsConfig(AppConfig):
    name = "automations"

    def ready(self) -> None:
        from automations import schema  # noqa: F401  (registers the OpenAPI extension)
        from automations.runs import record_runs
        from lms.events import receiver

        receiver(record_runs)
