import pytest

from tests.browser.live_api import LiveApi
from tests.learn.factories import ActivityFactory, CourseFactory, EnrollmentFactory, ModuleFactory


@pytest.fixture
def course(org):
    return CourseFactory(org=org, title="Python from scratch")


@pytest.fixture
def module(course):
    return ModuleFactory(course=course, seq=1)


@pytest.fixture
def enrolled(learner, course):
    """The ``learner`` fixture, enrolled in ``course``."""
    EnrollmentFactory(course=course, membership=learner.membership)
    return learner


@pytest.fixture
def make_activity(module):
    """An activity of ``module`` with the given completion rule and extra settings."""

    def make(rule: dict | None = None, **settings):
        if rule is not None:
            settings["completion"] = rule
        return ActivityFactory(module=module, settings=settings or None)

    return make


@pytest.fixture
def live(live_server) -> LiveApi:
    """The API of the live server over real HTTP (a test using it is a transactional one)."""
    return LiveApi(live_server.url)
