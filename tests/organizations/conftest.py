import pytest


@pytest.fixture(autouse=True)
def _throttle_counts_in_the_database(settings):
    """In-process tests count lookups in the database store whatever REDIS_URL says, so its
    counts roll back with each test and query counts are the same everywhere. The Redis
    store has its own tests (they need a reachable Redis)."""
    settings.CACHES = {
        **settings.CACHES,
        "shared": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "lms_shared_cache",
        },
    }
