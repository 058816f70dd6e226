"""Staff of one organization operate a webhook end to end in a real browser (issue 28,
CONTRACT 8.7 and 8.8): aim it at one course, read its secret once, send a test and see it
delivered, roll the secret, see a run fail against a receiver answering 500, and retry it
once the receiver recovered, the receiver's answer on the run page.

The worker's execution runs in-process (``automations.runs.execute``), as the worker would
run it. With ``LMS_ADMIN_SCREENSHOTS=docs/admin`` each page is saved (``make screenshots``)."""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from standardwebhooks import Webhook

from automations import runs
from automations.models import Automation, AutomationRun
from learn.services import enroll
from organizations.models import Membership
from tests.browser.admin_ui import Value
from tests.browser.test_admin_editors import shoot  # noqa: F401 (a fixture)
from tests.factories import OrganizationFactory, UserFactory
from tests.helpers import make_member
from tests.learn.factories import CourseFactory

DOWN = '{"error": "database unavailable", "retryAfter": 30}'
UP = '{"received": true}'
SECRET = re.compile(r"(whsec_[A-Za-z0-9+/=]+)$")


@pytest.fixture
def receiver():
    """A receiver on the loopback that keeps each delivery (headers and body) and answers
    200 with ``UP``, or 500 with ``DOWN`` while ``down`` is set."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            server.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
            status, answer = (500, DOWN) if server.down.is_set() else (200, UP)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer.encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.received, server.down = [], threading.Event()
    server.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/lms"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def verified(secret: str, delivery) -> dict:
    """The delivery's payload, verified by the Standard Webhooks package against ``secret``
    (it raises when no signature of the header matches)."""
    headers, body = delivery
    return Webhook(secret).verify(body, headers)


def secret_in(messages: list[str], start: str) -> str:
    [shown] = [m for m in messages if m.startswith(start)]
    return SECRET.search(shown).group(1)


def test_staff_aim_verify_test_roll_and_replay_a_webhook(
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
    CourseFactory(org=other, title="Their course")
    python = CourseFactory(org=org, title="Python basics")
    sql = CourseFactory(org=org, title="SQL basics")
    staff = make_staff(org, Membership.Role.OWNER, email="owner@acme.example")

    # Aimed at one course, among the organization's courses only.
    ui = admin_as(staff.user)
    ui.open_add("automations", "automation")
    assert ui.select_options("conditions") == ["Python basics", "SQL basics"]
    ui.fill(
        {"org": "Acme Learning", "name": "Tell the CRM", "trigger": Value("enrollment.created")}
    )
    ui.field("conditions").select_option(value=[str(python.id)])
    ui.fill_actions([{"type": "webhook", "input": {"url": receiver.url}}])
    shoot(ui.page, "automation-aimed")
    ui.save_added("_continue")
    automation = Automation.objects.for_org(org).get()
    assert automation.conditions == {"courseIds": [str(python.id)]}
    # Its secret, read this once.
    first_secret = secret_in(ui.messages(), "Signing secret of Tell the CRM")
    ui.page.reload()
    assert first_secret not in ui.page.content()

    # A test send, delivered and signed with that secret.
    with ui.page.expect_navigation():
        ui.page.get_by_role("button", name="Send test").click()
    assert any(m.startswith("A test enrollment.created event") for m in ui.messages())
    shoot(ui.page, "automation-test-sent")
    test_run = AutomationRun.objects.for_org(org).get(test=True)
    runs.execute(test_run.id)
    payload = verified(first_secret, receiver.received[-1])
    assert payload["type"] == "enrollment.created" and payload["data"]["courseId"] == str(python.id)
    assert payload["data"]["email"] == "owner@acme.example"
    with ui.page.expect_navigation():
        ui.page.locator("ul.messagelist a", has_text="see its run").click()
    delivery = ui.page.locator("#delivery-1")
    assert delivery.locator(".lms-delivery-status").inner_text() == "succeeded"
    assert delivery.locator(".lms-delivery-code").inner_text() == "200"
    assert delivery.locator(".lms-delivery-body pre").inner_text() == UP
    assert not ui.page.get_by_role("button", name="Retry").count()
    shoot(ui.page, "automation-test-run")

    # A new secret, shown once; deliveries now verify with it (the old one still signs).
    ui.open_change(automation)
    with ui.page.expect_navigation():
        ui.page.get_by_role("button", name="Roll secret").click()
    new_secret = secret_in(ui.messages(), "New signing secret of Tell the CRM")
    assert new_secret != first_secret
    shoot(ui.page, "automation-secret-rolled")

    # A learner enrolled in the aimed course, while the receiver answers 500: the run fails;
    # enrolled in another course, no run.
    receiver.down.set()
    learner = make_member(org, user=UserFactory(email="ada@example.com"))
    enroll(membership=learner.membership, course=sql)
    enroll(membership=learner.membership, course=python)
    run = AutomationRun.objects.for_org(org).get(test=False)
    runs.execute(run.id)
    verified(new_secret, receiver.received[-1])
    verified(first_secret, receiver.received[-1])
    ui.open_change(run)
    delivery = ui.page.locator("#delivery-1")
    assert delivery.locator(".lms-delivery-status").inner_text() == "failed"
    assert delivery.locator(".lms-delivery-code").inner_text() == "500"
    assert delivery.locator(".lms-delivery-body pre").inner_text() == DOWN
    shoot(ui.page, "automation-run-failed")

    # Retried once the receiver recovered: delivered, with the same webhook-id.
    receiver.down.clear()
    with ui.page.expect_navigation():
        ui.page.get_by_role("button", name="Retry").click()
    assert "The run was started again." in ui.messages()
    assert not ui.page.get_by_role("button", name="Retry").count()
    runs.execute(run.id)
    ui.page.reload()
    delivery = ui.page.locator("#delivery-1")
    assert delivery.locator(".lms-delivery-status").inner_text() == "succeeded"
    assert delivery.locator(".lms-delivery-code").inner_text() == "200"
    assert delivery.locator(".lms-delivery-body pre").inner_text() == UP
    failed, retried = receiver.received[-2:]
    assert failed[0]["webhook-id"] == retried[0]["webhook-id"]
    assert verified(new_secret, retried)["data"]["email"] == "ada@example.com"
    shoot(ui.page, "automation-run-retried")
