from django.apps import AppConfig


class AutomationsConfig(AppConfig):
    name = "automations"
