import subprocess

import pytest

from lms import events
from organizations.models import Membership
from tests.factories import OrganizationFactory
from tests.helpers import ApiClient, make_member, org_fixture
from tests.schema import fuzz_stats

Role = Membership.Role

# Tests that start a process (a server, a worker, a browser, a throwaway PostgreSQL, a
# command) or serve on a live socket are marked ``processes``: `make quick` leaves them out,
# and under pytest-xdist they are one group (below), meant to run on one worker in turn; with
# pytest 9 and pytest-xdist 3.8 the group is spread over the workers all the same (README), so
# each such test keeps its ports, Redis databases, clusters and connection names its own.
PROCESSES = "processes"
_running: list[pytest.Item] = []  # the test being run, for the guard on subprocess.Popen


def _starts_processes(item: pytest.Item) -> bool:
    return item.get_closest_marker(PROCESSES) is not None or "live_server" in item.fixturenames


def pytest_configure(config):
    """Under xdist, ``--dist load`` (what ``-n`` implies) becomes ``loadgroup``, so the
    ``processes`` group is kept on one worker however the run was started."""
    if getattr(config.option, "dist", "no") in {"load", "worksteal"}:
        config.option.dist = "loadgroup"
    subprocess.Popen.__init__ = _guarded_popen_init(subprocess.Popen.__init__)


def _guarded_popen_init(init):
    """A test not marked ``processes`` that starts one fails, saying to mark it: so
    `make quick` stays in-process and the xdist group holds every test that needs it."""

    def guarded(self, *args, **kwargs):
        if _running and not _starts_processes(_running[-1]):
            raise RuntimeError(
                f"{_running[-1].nodeid} starts a process: mark it "
                f"@pytest.mark.{PROCESSES} (tests/conftest.py says why)"
            )
        init(self, *args, **kwargs)

    return guarded


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    _running.append(item)
    try:
        return (yield)
    finally:
        _running.pop()


# A test's own body too; teardowns are not watched (a wider fixture ends after whichever test
# ran last, marked or not).
pytest_runtest_call = pytest_runtest_setup


def pytest_sessionfinish(session):
    """An xdist worker hands its schema-fuzzing counts to the controller, which prints them."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["fuzz_cases"] = dict(fuzz_stats.cases)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    fuzz_stats.cases.update(getattr(node, "workeroutput", {}).get("fuzz_cases", {}))


def pytest_terminal_summary(terminalreporter):
    """The schema fuzzer's case count, so every CI log shows how much was fuzzed."""
    if not fuzz_stats.cases:
        return
    runs: dict[str, list[int]] = {}
    for key, count in fuzz_stats.cases.items():
        run = key.split(":", 1)[0]
        runs.setdefault(run, []).append(count)
    total = sum(fuzz_stats.cases.values())
    detail = ", ".join(
        f"{run}: {sum(counts)} cases over {len(counts)} operations"
        for run, counts in sorted(runs.items())
    )
    terminalreporter.write_line(f"schemathesis: {total} cases ({detail})")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Tests that start processes or use the live server are marked ``processes`` and
    grouped for xdist; tests marked ``postgres`` are skipped, with the reason, on SQLite."""
    from django.conf import settings

    grouped = config.pluginmanager.hasplugin("xdist")
    for item in items:
        if _starts_processes(item):
            item.add_marker(PROCESSES)
            if grouped:
                item.add_marker(pytest.mark.xdist_group(PROCESSES))
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
