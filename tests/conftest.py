import pytest

from lms import events
from organizations.models import Membership
from tests.factories import OrganizationFactory
from tests.helpers import ApiClient, make_member, org_fixture

Role = Membership.Role


def pytest_collection_modifyitems(config, items):
    """Tests marked ``postgres`` are skipped, with the reason, when running on SQLite."""
    from django.conf import settings

    if settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (set DATABASE_URL to run it)")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def api() -> ApiClient:
    return ApiClient()


@pytest.fixture
def org(db):
    return OrganizationFactory(name="Acme Learning")


@pytest.fixture
def other_org(db):
    return OrganizationFactory(name="Rival Academy")


owner = org_fixture(make_member, role=Role.OWNER)
admin_member = org_fixture(make_member, role=Role.ADMIN)
instructor = org_fixture(make_member, role=Role.INSTRUCTOR)
learner = org_fixture(make_member, role=Role.LEARNER)
other_owner = org_fixture(make_member, "other_org", role=Role.OWNER)


@pytest.fixture(autouse=True, scope="session")
def _demo_manifest_of_the_tests(tmp_path_factory):
    """seed_demo writes its manifest (docs/demo.md): the tests' runs write theirs to a
    directory of their own, never over the developer's var/demo.json."""
    from django.test import override_settings

    path = tmp_path_factory.mktemp("demo") / "demo.json"
    with override_settings(LMS_DEMO_MANIFEST=path):
        yield path


@pytest.fixture(autouse=True)
def _plain_static_storage(settings):
    """Tests do not run collectstatic; the hashed manifest storage is covered by the deploy
    test that serves the admin's static files from a collected tree."""
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture(autouse=True)
def _token_lookups_every_time(settings):
    """In-process tests look every token up (their query counts include the lookup, and a
    test's database rolls back under a process's memory); tests/organizations/
    test_token_cache.py turns the per-process memory on."""
    from organizations.authentication import forget_tokens

    settings.LMS_TOKEN_CACHE_SECONDS = 0
    yield
    forget_tokens()


@pytest.fixture
def receive_events():
    """Registers receivers through ``lms.events.receiver`` as an app does, for this test
    only: ``receive_events(func)``. They are removed afterwards."""
    added: list = []

    def register(func):
        added.append(events.receiver(func))
        return func

    try:
        yield register
    finally:
        for func in added:
            events._receivers.remove(func)  # no public unregister: apps register for good


@pytest.fixture
def recorded_events(receive_events) -> list[events.Event]:
    """Every event emitted while the test runs, in order (threads included)."""
    seen: list[events.Event] = []
    receive_events(seen.append)
    return seen


class ReceiverFailed(Exception):
    pass


@pytest.fixture
def failing_receiver(receive_events):
    """A receiver that raises on every event of ``type``, as a broken one would: what the
    emitting request wrote must roll back with it."""

    def fail_on(type_: str) -> None:
        def fail(event: events.Event) -> None:
            if event.type == type_:
                raise ReceiverFailed(event.type)

        receive_events(fail)

    return fail_on
