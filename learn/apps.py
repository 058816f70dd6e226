from django.apps import AppConfig


class LearnConfig(AppConfig):
    name = "learn"

    def ready(self) -> None:
        from learn import standing

        standing.connect()
