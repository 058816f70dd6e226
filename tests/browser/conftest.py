"""The admin in a real browser: Playwright driving Debian's Chromium, headless, against
pytest-django's live server (a real socket and thread; the test database is shared with it,
an in-memory SQLite one included).

Fixtures for the tests of every area:

- ``admin_ui``: an ``AdminUI`` (tests/browser/admin_ui.py) on a fresh browser context.
- ``admin_as(user)``: the same, already signed in as ``user`` (session cookie, no form).
- ``superuser``, ``make_staff(org, role=...)``: staff people with a known password.
- ``live_api``: the live server's API over HTTP (tests/browser/live_api.py).

Every test here skips with the reason when Chromium or Playwright is missing; .ci/run
installs Chromium and sets LMS_REQUIRE_BROWSER=true, so in CI they run or fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from organizations.models import Membership, Organization, User
from tests.browser.admin_ui import AdminUI
from tests.browser.live_api import LiveApi
from tests.factories import MembershipFactory, UserFactory

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "correct horse battery staple 42"
FAILURES_DIR = Path(django_settings.VAR_DIR) / "browser-failures"


def chromium_path() -> str | None:
    """LMS_CHROMIUM if set, else Debian's Chromium; None if that is not installed."""
    candidate = os.environ.get("LMS_CHROMIUM") or "/usr/bin/chromium"
    return candidate if shutil.which(candidate) else None


def _unavailable(reason: str) -> None:
    """Skip where the browser is optional; fail in CI, which installs it (LMS_REQUIRE_BROWSER)."""
    if os.environ.get("LMS_REQUIRE_BROWSER", "").lower() in {"1", "true", "yes"}:
        pytest.fail(f"browser tests required but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="package")
def browser() -> Iterator:
    path = chromium_path()
    if path is None:
        _unavailable(
            "no Chromium installed: `apt-get install chromium` (or set LMS_CHROMIUM to a "
            "Chromium binary); .ci/run installs it"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed: pip install -e '.[dev]'")
    # Playwright's sync API keeps an asyncio loop registered as running on this thread, and
    # Django refuses ORM calls from a thread with a running loop. The tests themselves are
    # plain synchronous code, so the check is lifted while the browser lives (this package
    # only), and put back afterwards for the rest of the suite.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    playwright = sync_playwright().start()
    try:
        try:
            chromium = playwright.chromium.launch(
                executable_path=path, headless=True, args=CHROMIUM_ARGS
            )
        except Exception as exc:
            version = subprocess.run([path, "--version"], capture_output=True, text=True)
            pytest.fail(f"Chromium at {path} ({version.stdout.strip()}) did not start: {exc}")
        yield chromium
        chromium.close()
    finally:
        playwright.stop()
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    """The admin checks real passwords; a cheap hasher keeps each sign-in fast."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def page(request, browser, live_server, transactional_db):
    context = browser.new_context(base_url=live_server.url, locale="en-US")
    context.set_default_timeout(10_000)
    page = context.new_page()
    console_errors: list[str] = []
    page.on("pageerror", lambda exc: console_errors.append(str(exc)))
    yield page
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        FAILURES_DIR.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=FAILURES_DIR / f"{request.node.name}.png", full_page=True)
    context.close()
    # A script error in an admin page (a broken widget, a missing static file) fails the test.
    assert not console_errors, console_errors


@pytest.fixture
def admin_ui(page, live_server) -> AdminUI:
    return AdminUI(page, live_server.url)


@pytest.fixture
def admin_as(browser, live_server, admin_ui) -> Callable[[User], AdminUI]:
    """Signs the page in as ``user`` through a real session cookie (the login form itself is
    covered by its own test), and returns the AdminUI."""
    from django.test import Client

    def sign_in(user: User) -> AdminUI:
        client = Client()
        client.force_login(user)
        cookie = client.cookies[django_settings.SESSION_COOKIE_NAME]
        admin_ui.page.context.add_cookies(
            [{"name": cookie.key, "value": cookie.value, "url": live_server.url}]
        )
        return admin_ui

    return sign_in


@pytest.fixture
def live_api(live_server) -> LiveApi:
    return LiveApi(live_server.url)


@dataclass
class StaffPerson:
    user: User
    password: str = PASSWORD

    @property
    def email(self) -> str:
        return self.user.email


@pytest.fixture
def superuser(transactional_db) -> StaffPerson:
    user = User.objects.create_superuser(email="root@lms.example", password=PASSWORD)
    return StaffPerson(user)


@pytest.fixture
def make_staff(transactional_db) -> Callable[..., StaffPerson]:
    """A staff user (not a superuser) with ``role`` in ``org``: owners and admins administer
    their organizations in the admin, nothing else."""

    def make(org: Organization, role: str = Membership.Role.OWNER, **user_fields) -> StaffPerson:
        user = UserFactory(is_staff=True, **user_fields)
        user.set_password(PASSWORD)
        user.save()
        MembershipFactory(org=org, user=user, role=role)
        return StaffPerson(user)

    return make
