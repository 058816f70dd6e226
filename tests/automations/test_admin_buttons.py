"""The buttons of the admin's automation and run pages (issue 28, CONTRACT 8.8): "Roll
secret" shows the new secret once, "Send test" records a test run and links to it, "Retry"
starts a failed run again; each is a POST with the admin's CSRF check, and a run that is not
failed is said so, never a 500."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from automations.models import Automation, AutomationRun, AutomationRunAction
from organizations.models import Membership
from tests.automations.factories import AutomationFactory, make_run
from tests.factories import UserFactory
from tests.helpers import admin_client, make_member

pytestmark = pytest.mark.django_db

AUTOMATIONS = "/admin/automations/automation/"
RUNS = "/admin/automations/automationrun/"


def failed_run(org, automation, status="failed"):
    run = make_run(automation, org=org, event_data={"email": "ada@example.com"}, status=status)
    AutomationRunAction.objects.create(
        org=org, run=run, index=0, status=status, attempts=5, last_error="Refused."
    )
    return run


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_roll_secret_shows_the_new_secret_once_and_keeps_the_old_one_for_the_overlap(org):
    automation = AutomationFactory(org=org, name="Tell the CRM")
    old = automation.signing_secret
    client = admin_client(org)
    page = client.get(f"{AUTOMATIONS}{automation.pk}/change/").content.decode()
    assert "Roll secret" in page and "Send test" in page

    rolled = client.post(f"{AUTOMATIONS}{automation.pk}/roll-secret/")
    response = client.get(rolled["Location"])

    automation.refresh_from_db()
    # Shown from the session, never carried in a cookie (signed, not encrypted: a proxy's
    # log or a HAR file would keep it).
    for answer in (rolled, response):
        assert "messages" not in answer.cookies
        assert not [c for c in answer.cookies.values() if automation.signing_secret in c.value]
    assert automation.signing_secret != old and automation.previous_signing_secret == old
    [shown] = [m for m in messages_of(response) if m.startswith("New signing secret")]
    assert shown.endswith(f": {automation.signing_secret}")
    assert "for 24 hours" in shown
    again = client.get(f"{AUTOMATIONS}{automation.pk}/change/").content.decode()
    assert automation.signing_secret not in again


def test_send_test_records_a_test_run_for_the_staff_user_and_links_to_it(org):
    automation = AutomationFactory(org=org, name="Welcome", enabled=False)
    user = UserFactory(is_staff=True, email="staff@example.com")
    staff = make_member(org, Membership.Role.ADMIN, user=user)
    client = Client()
    client.force_login(user)

    response = client.post(f"{AUTOMATIONS}{automation.pk}/send-test/", follow=True)

    run = AutomationRun.objects.for_org(org).get()
    assert run.test and run.automation_id == automation.id
    assert run.event_data["email"] == "staff@example.com"
    # The staff user's own membership, as an API caller's: never a null memberId.
    assert run.event_data["memberId"] == str(staff.membership.id)
    [said] = messages_of(response)
    assert f"{RUNS}{run.pk}/change/" in said


def test_send_test_beyond_the_organizations_limit_says_so_and_records_nothing(org, settings):
    settings.LMS_TEST_SENDS_PER_MINUTE = 1
    automation = AutomationFactory(org=org)
    client = admin_client(org)
    client.post(f"{AUTOMATIONS}{automation.pk}/send-test/", follow=True)
    response = client.post(f"{AUTOMATIONS}{automation.pk}/send-test/", follow=True)
    assert response.status_code == 200
    [said] = messages_of(response)
    assert said.startswith("Too many requests; retry in ")
    assert AutomationRun.objects.for_org(org).count() == 1


def test_the_buttons_answer_post_only_with_a_csrf_token(org):
    automation = AutomationFactory(org=org)
    client = admin_client(org)
    assert client.get(f"{AUTOMATIONS}{automation.pk}/roll-secret/").status_code == 405
    assert client.get(f"{AUTOMATIONS}{automation.pk}/send-test/").status_code == 405
    run = failed_run(org, automation)
    assert client.get(f"{RUNS}{run.pk}/retry/").status_code == 405

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(UserFactory(is_staff=True, is_superuser=True))
    secret = automation.signing_secret
    assert strict.post(f"{AUTOMATIONS}{automation.pk}/roll-secret/").status_code == 403
    automation.refresh_from_db()
    assert automation.signing_secret == secret
    assert not AutomationRun.objects.for_org(org).filter(test=True).exists()


def test_retry_starts_a_failed_run_again_and_only_a_failed_run_shows_the_button(org):
    automation = AutomationFactory(org=org)
    run = failed_run(org, automation)
    client = admin_client(org)
    page = client.get(f"{RUNS}{run.pk}/change/").content.decode()
    assert re.search(rf'action="{RUNS}{run.pk}/retry/"', page)

    response = client.post(f"{RUNS}{run.pk}/retry/", follow=True)

    run.refresh_from_db()
    assert run.status == "pending"
    assert messages_of(response) == ["The run was started again."]
    page = response.content.decode()
    assert f"{RUNS}{run.pk}/retry/" not in page

    # A forged POST for a run that is not failed is an error message, not a 500.
    response = client.post(f"{RUNS}{run.pk}/retry/", follow=True)
    assert response.status_code == 200
    assert messages_of(response) == ["Only a failed run can be retried; this one is pending."]


def test_superuser_may_use_the_buttons_of_any_organization(org):
    automation = AutomationFactory(org=org)
    client = admin_client()
    response = client.post(f"{AUTOMATIONS}{automation.pk}/roll-secret/", follow=True)
    assert response.status_code == 200
    assert Automation.objects.for_org(org).get().previous_signing_secret
