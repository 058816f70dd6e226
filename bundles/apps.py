from django.apps import AppConfig
from django.db.backends.signals import connection_created


def _unicode_lower(value):
    return value.lower() if isinstance(value, str) else value


def use_unicode_lower(sender, connection, **kwargs) -> None:
    """SQLite's built-in LOWER folds only A-Z; PostgreSQL's folds all of Unicode. Bundle
    search and the name sort compare LOWER(name) (the stored ``name_lower`` column), so on
    SQLite LOWER is replaced by Python's, and both databases fold "CRÈME" to "crème"."""
    if connection.vendor == "sqlite":
        connection.connection.create_function("LOWER", 1, _unicode_lower, deterministic=True)


class BundlesConfig(AppConfig):
    name = "bundles"

    def ready(self) -> None:
        connection_created.connect(use_unicode_lower, dispatch_uid="bundles.unicode_lower")
