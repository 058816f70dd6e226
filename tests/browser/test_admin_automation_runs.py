"""Staff operate webhooks in a real browser (issue 28): the action form shows every problem
beside its own field at once, and a run that a receiver refused reads as a delivery log,
with the receiver's code and body and the Authorization header masked.

With ``LMS_ADMIN_SCREENSHOTS=docs/admin`` these tests also save their pages as screenshots
(``make screenshots``)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from automations import runs
from automations.models import Automation, AutomationRun
from learn.services import enroll
from organizations.models import Membership
from tests.browser.admin_ui import Value
from tests.browser.test_admin_editors import shoot  # noqa: F401 (a fixture)
from tests.factories import OrganizationFactory, UserFactory
from tests.helpers import make_member
from tests.learn.factories import CourseFactory

TOKEN = "Bearer sk_live_0123456789abcdef"
ANSWER = '{"error": "database unavailable", "retryAfter": 30}'


@pytest.fixture
def receiver():
    """A receiver on the loopback that answers every delivery 500 with ``ANSWER``, keeping
    the headers it was sent."""
    received = []

    class Refusing(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            received.append(dict(self.headers))
            self.rfile.read(int(self.headers["Content-Length"]))
            body = ANSWER.encode()
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.received = received
    server.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/lms"
    yield server
    server.shutdown()
    server.server_close()


def test_every_problem_of_the_actions_shows_beside_its_field_at_once(admin_as, make_staff, shoot):  # noqa: F811
    org = OrganizationFactory(name="Acme Learning")
    staff = make_staff(org, Membership.Role.OWNER)

    ui = admin_as(staff.user)
    ui.open_add("automations", "automation")
    ui.fill({"org": "Acme Learning", "name": "Tell the CRM", "trigger": Value("course.completed")})
    # The recipient is a select; "An e-mail address" shows a box for it.
    assert not ui.field("actions-0-send_email-to-address").is_visible()
    ui.fill({"actions-0-send_email-to": "An e-mail address"})
    assert ui.field("actions-0-send_email-to-address").is_visible()
    ui.fill({"actions-0-send_email-to-address": "crm at example.com"})
    ui.page.click(".lms-action-add")
    ui.fill({"actions-1-type": Value("webhook")})
    assert ui.select_options("actions-1-webhook-method") == ["POST", "PUT"]
    labels = ui.page.locator("li.lms-action").nth(1).locator(".lms-action-input:visible label")
    assert labels.all_inner_texts() == ["URL", "HTTP method", "Headers"]
    ui.fill(
        {
            "actions-1-webhook-url": "hooks.example.com/lms",
            "actions-1-webhook-method": "PUT",
            "actions-1-webhook-headers": f"Authorization: {TOKEN}\nX-Source lms",
        }
    )
    ui.save()

    assert "Please correct the errors below." in ui.error_note()
    assert ui.errors() == {
        "actions-0-send_email-to": ["Must be inviter, learner or an e-mail address."],
        "actions-0-send_email-subject": ["Must be a non-empty string."],
        "actions-1-webhook-url": ["Must be an http or https URL."],
        "actions-1-webhook-headers": ["'X-Source lms' is not a header line: write Name: value."],
    }
    # Only the faulty inputs are outlined; the good ones keep their border.
    invalid = ui.page.locator("#content-main .lms-actions [aria-invalid='true']")
    assert sorted(invalid.evaluate_all("es => es.map(e => e.name)")) == [
        "actions-0-send_email-subject",
        "actions-0-send_email-to-address",
        "actions-1-webhook-headers",
        "actions-1-webhook-url",
    ]
    border = "e => getComputedStyle(e).borderTopColor"
    outlined = ui.field("actions-1-webhook-url").evaluate(border)
    assert ui.field("actions-0-send_email-body").evaluate(border) != outlined
    assert ui.field("actions-1-webhook-method").evaluate(border) != outlined
    # What was typed is kept to correct.
    assert ui.field("actions-0-send_email-to-address").input_value() == "crm at example.com"
    assert ui.field("actions-1-webhook-method").input_value() == "PUT"
    shoot(ui.page, "automation-action-errors")
    assert not Automation.all_orgs.exists()

    ui.fill(
        {
            "actions-0-send_email-to-address": "crm@example.com",
            "actions-0-send_email-subject": "Completed: {{ course.title }}",
            "actions-1-webhook-url": "https://hooks.example.com/lms",
            "actions-1-webhook-headers": f"Authorization: {TOKEN}\nX-Source: lms",
        }
    )
    ui.save_added()
    automation = Automation.all_orgs.get()
    # Its signing secret is shown this once, to copy.
    [shown] = [m for m in ui.messages() if m.startswith("Signing secret of Tell the CRM")]
    assert shown.endswith(f": {automation.signing_secret}")
    shoot(ui.page, "automation-secret")
    ui.open_change(automation)
    assert automation.signing_secret not in ui.page.content()
    assert [a["input"] for a in automation.actions] == [
        {"to": "crm@example.com", "subject": "Completed: {{ course.title }}", "body": ""},
        {
            "url": "https://hooks.example.com/lms",
            "method": "PUT",
            "headers": {"Authorization": TOKEN, "X-Source": "lms"},
        },
    ]


def test_a_refused_delivery_reads_as_a_log_with_its_answer_and_no_credential(
    admin_as,
    make_staff,
    receiver,
    settings,
    shoot,  # noqa: F811
):
    settings.LMS_WEBHOOK_ALLOW_PRIVATE = True  # the receiver is on the loopback
    settings.LMS_AUTOMATION_ATTEMPTS = 1  # the first refusal fails the run
    org = OrganizationFactory(name="Acme Learning")
    other = OrganizationFactory(name="Other Org")
    staff = make_staff(org, Membership.Role.OWNER)
    course = CourseFactory(org=org, title="Python basics")

    ui = admin_as(staff.user)
    ui.open_add("automations", "automation")
    ui.fill(
        {"org": "Acme Learning", "name": "Tell the CRM", "trigger": Value("enrollment.created")}
    )
    ui.fill_actions(
        [
            {
                "type": "webhook",
                "input": {
                    "url": receiver.url,
                    "headers": {"Authorization": TOKEN, "X-Source": "lms"},
                },
            }
        ]
    )
    ui.save_added()

    learner = make_member(org, user=UserFactory(email="ada@example.com"))
    enroll(membership=learner.membership, course=course)
    theirs = make_member(other, user=UserFactory(email="theirs@example.com"))
    enroll(membership=theirs.membership, course=CourseFactory(org=other))
    (run,) = AutomationRun.objects.for_org(org)
    runs.execute(run.id)
    assert receiver.received[0]["Authorization"] == TOKEN  # delivered with it, shown masked

    ui.open_changelist("automations", "automation")
    [listed] = ui.changelist_rows()
    assert listed.startswith("Tell the CRM Acme Learning enrollment.created")
    row = ui.page.locator("#result_list tbody tr").first
    assert row.locator(".field-succeeded_recently").inner_text().strip() == "0"
    assert row.locator(".field-failed_recently").inner_text().strip() == "1"
    shoot(ui.page, "automation-list")

    ui.follow(row.locator(".field-failed_recently a"))
    [listed] = ui.changelist_rows()
    assert "Tell the CRM" in listed and "ada@example.com" in listed
    assert "The endpoint answered 500." in listed and "theirs@example.com" not in listed
    shoot(ui.page, "automation-runs")

    ui.follow(ui.page.locator("#result_list tbody tr th a").first)
    delivery = ui.page.locator("#delivery-1")
    assert delivery.locator(".lms-delivery-status").inner_text() == "failed"
    assert delivery.locator(".lms-delivery-attempts").inner_text() == "1"
    assert delivery.locator(".lms-delivery-code").inner_text() == "500"
    assert delivery.locator(".lms-delivery-duration").inner_text().endswith(" ms")
    assert delivery.locator(".lms-delivery-body pre").inner_text() == ANSWER
    assert delivery.locator(".lms-delivery-error").inner_text() == "The endpoint answered 500."
    headers = delivery.locator("tr.lms-delivery-header").all_inner_texts()
    # (PostgreSQL's jsonb keeps no key order)
    assert sorted(" ".join(h.split()) for h in headers) == [
        "Header Authorization ••••••••",
        "Header X-Source lms",
    ]
    assert "sk_live" not in ui.page.content()
    shoot(ui.page, "automation-run")
