from django.apps import AppConfig


class OrganizationsConfig(AppConfig):
    name = "organizations"
    verbose_name = "Organizations and access"

    def ready(self) -> None:
        from organizations import schema  # noqa: F401  (registers the OpenAPI auth extension)
