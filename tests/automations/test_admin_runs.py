"""The run pages of the admin as a delivery log staff can read (issue 28, CONTRACT 8.8): per
action a small table of what happened, credentials in headers masked, run list columns that
name the automation, the learner and the last error, and on the automation list the last 7
days' succeeded and failed runs, each page at a constant number of queries."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from automations.models import AutomationRun, AutomationRunAction
from tests.automations.factories import AutomationFactory, welcome_email
from tests.automations.factories import make_run as new_run
from tests.helpers import admin_client

pytestmark = pytest.mark.django_db

RUNS = "/admin/automations/automationrun/"
AUTOMATIONS = "/admin/automations/automation/"
HEADERS = {
    "Authorization": "Bearer sk_live_AUTHSECRET",
    "X-Api-Key": "KEYSECRET",
    "X-Webhook-Signature": "SIGSECRET",
    "x-auth-token": "TOKENSECRET",
    "X-Client-Secret": "CLIENTSECRET",
    "X-Source": "lms-visible",
}


def hook(**headers) -> dict:
    return {
        "type": "webhook",
        "input": {"url": "https://hooks.example.com/in", "method": "PUT", "headers": headers},
    }


def make_run(org, automation, *, email="learner@example.com", status="running", ago=None):
    created = timezone.now() - (ago or timedelta(0))
    run = new_run(
        automation,
        org=org,
        occurred_at=created,
        event_data={"email": email, "courseId": "x", "memberId": "y"},
        due_at=created,
        status=status,
    )
    if ago:
        AutomationRun.objects.for_org(org).filter(id=run.id).update(created_at=created)
    return run


def test_a_run_page_shows_each_action_as_a_table_with_credentials_masked(org):
    automation = AutomationFactory(
        org=org, name="Tell the CRM", actions=[hook(**HEADERS), welcome_email()]
    )
    run = make_run(org, automation, status="failed")
    body = "upstream exploded: " + "x" * 2000
    AutomationRunAction.objects.create(
        org=org,
        run=run,
        index=0,
        status="failed",
        attempts=5,
        last_error="The endpoint answered 500.",
        response={"status": 500, "durationMs": 37, "body": body},
    )
    AutomationRunAction.objects.create(org=org, run=run, index=1, status="skipped")

    page = admin_client(org).get(f"{RUNS}{run.id}/change/").content.decode()
    # Named by its automation, trigger and learner, not by the automation's id.
    title = "Tell the CRM: enrollment.created run for learner@example.com"
    assert f"&rsaquo; {title}\n</div>" in page and f"<h2>{title}</h2>" in page
    assert f"run of {automation.id}" not in page
    for secret in ("AUTHSECRET", "KEYSECRET", "SIGSECRET", "TOKENSECRET", "CLIENTSECRET"):
        assert secret not in page
    assert "lms-visible" in page  # a header that is no credential is shown
    assert page.count("••••••••") == 5
    assert '<td class="lms-delivery-code">500</td>' in page
    assert '<td class="lms-delivery-duration">37 ms</td>' in page
    assert '<td class="lms-delivery-attempts">5</td>' in page
    assert '<td class="lms-delivery-error">The endpoint answered 500.</td>' in page
    assert f"<pre>{body[:1024]}</pre>" in page and body[:1025] not in page
    assert "https://hooks.example.com/in" in page
    assert '<td class="lms-delivery-status">skipped</td>' in page
    assert '"Authorization"' not in page  # no JSON dump of the actions any more


def test_the_run_list_names_the_automation_the_learner_and_the_last_error(org):
    automation = AutomationFactory(org=org, name="Tell the CRM", actions=[hook()])
    run = make_run(org, automation, email="ada@example.com")
    AutomationRunAction.objects.create(
        org=org, run=run, index=0, status="running", attempts=2, last_error="timed out"
    )
    page = admin_client(org).get(RUNS).content.decode()
    assert '<td class="field-automation_name">Tell the CRM</td>' in page
    assert '<td class="field-learner">ada@example.com</td>' in page
    assert '<td class="field-last_error">timed out</td>' in page
    assert str(automation.id) not in page.split('id="result_list"')[1].split("</table>")[0]


def test_the_run_list_costs_the_same_queries_for_2_and_12_runs(org, django_assert_num_queries):
    staff = admin_client(org)
    automation = AutomationFactory(org=org, actions=[hook(), welcome_email()])

    def add_runs(count: int) -> None:
        for number in range(AutomationRun.objects.for_org(org).count(), count):
            run = make_run(org, automation, email=f"l{number}@example.com")
            AutomationRunAction.objects.create(
                org=org, run=run, index=0, status="failed", attempts=5, last_error="500"
            )

    add_runs(2)
    staff.get(RUNS)  # caches per process
    with CaptureQueriesContext(connection) as few:
        assert staff.get(RUNS).status_code == 200
    add_runs(12)
    with django_assert_num_queries(len(few)):
        page = staff.get(RUNS)
    assert page.content.decode().count("l11@example.com") == 1


def test_the_automation_list_counts_the_last_7_days_runs_in_its_query(
    org, django_assert_num_queries
):
    staff = admin_client(org)
    busy = AutomationFactory(org=org, name="Busy")
    quiet = AutomationFactory(org=org, name="Quiet")
    for status in ["succeeded"] * 3 + ["failed"] * 2 + ["running"]:
        make_run(org, busy, status=status)
    make_run(org, busy, status="failed", ago=timedelta(days=8))  # too old to count
    make_run(org, quiet, status="succeeded", ago=timedelta(days=6))
    staff.get(AUTOMATIONS)  # caches per process
    with CaptureQueriesContext(connection) as counted:
        page = staff.get(AUTOMATIONS).content.decode()
    rows = {
        name: row
        for row in page.split("<tr")[1:]
        for name in ("Busy", "Quiet")
        if f">{name}</a>" in row
    }
    assert ">3</a></td>" in rows["Busy"].split('field-succeeded_recently">')[1][:400]
    assert rows["Busy"].split('field-failed_recently">')[1].split("</td>")[0].endswith(">2</a>")
    assert rows["Quiet"].split('field-succeeded_recently">')[1].split("</td>")[0].endswith(">1</a>")
    assert rows["Quiet"].split('field-failed_recently">')[1].split("</td>")[0].endswith(">0</a>")
    for number in range(5):  # more automations with runs: the same queries
        make_run(org, AutomationFactory(org=org, name=f"More {number}"), status="failed")
    with django_assert_num_queries(len(counted)):
        assert staff.get(AUTOMATIONS).status_code == 200


def test_the_count_links_to_those_runs(org):
    staff = admin_client(org)
    automation = AutomationFactory(org=org, name="Busy")
    failed = make_run(org, automation, status="failed")
    old = make_run(org, automation, status="failed", ago=timedelta(days=8))
    page = staff.get(AUTOMATIONS).content.decode()
    link = page.split('field-failed_recently"><a href="')[1].split('"')[0].replace("&amp;", "&")
    listed = staff.get(link)
    assert listed.status_code == 200
    assert f"{failed.id}/change/" in listed.content.decode()
    assert f"{old.id}/change/" not in listed.content.decode()


def test_staff_of_one_organization_see_none_of_anothers_runs(org, other_org):
    mine = make_run(org, AutomationFactory(org=org, name="Mine"), email="mine@example.com")
    theirs_automation = AutomationFactory(org=other_org, name="Theirs")
    theirs = make_run(other_org, theirs_automation, email="theirs@example.com")
    AutomationRunAction.objects.create(
        org=other_org, run=theirs, index=0, status="failed", last_error="their error"
    )
    staff = admin_client(org)
    page = staff.get(RUNS).content.decode()
    assert "mine@example.com" in page
    for leaked in ("theirs@example.com", "Theirs", "their error", str(theirs.id)):
        assert leaked not in page
    assert staff.get(f"{RUNS}{theirs.id}/change/").status_code == 302  # as unknown
    listed = staff.get(AUTOMATIONS).content.decode()
    assert "Theirs" not in listed and str(theirs_automation.id) not in listed
    assert mine
