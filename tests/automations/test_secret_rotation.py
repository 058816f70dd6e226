"""CONTRACT 8.8: `POST /api/automations/{id}/rotate-secret` issues a new signing secret shown
once; for the overlap after it, deliveries carry the new and the old signature, each of which
the `standardwebhooks` package's own verifier accepts with its own secret. The deliveries
are real, to a receiver on the loopback."""

from __future__ import annotations

import base64
import logging
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from automations import runs
from automations.models import Automation, AutomationRun
from learn.services import enroll
from lms.ops.logs import JsonFormatter
from tests.automations.factories import AutomationFactory
from tests.helpers import assert_error, assert_foreign_looks_missing, make_member
from tests.learn.factories import CourseFactory

pytestmark = pytest.mark.django_db
MISSING = "01900000-0000-7000-8000-000000000000"


def rotate_url(automation_id) -> str:
    return f"/api/automations/{automation_id}/rotate-secret"


@pytest.fixture
def receiver(settings):
    settings.LMS_WEBHOOK_ALLOW_PRIVATE = True  # the receiver is on the loopback
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append(
                {"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
            )
            self.send_response(204)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    server.shutdown()
    server.server_close()


def deliver(api, owner, automation_id: str, received: list) -> dict:
    """Cause an event, execute its run as the worker does, and answer the delivery."""
    before = len(received)
    enroll(membership=make_member(owner.org).membership, course=CourseFactory(org=owner.org))
    run = (
        AutomationRun.objects.for_org(owner.org)
        .filter(automation_id=automation_id)
        .latest("created_at")
    )
    runs.execute(run.id)
    assert len(received) == before + 1
    return received[-1]


def create_hook(api, owner, url: str) -> dict:
    body = {
        "name": "Hook",
        "trigger": "enrollment.created",
        "actions": [{"type": "webhook", "input": {"url": url}}],
    }
    created = api.post("/api/automations", body, token=owner.token)
    assert created.status_code == 201, created.content
    return created.json()


def only(delivery: dict, signature: str) -> dict:
    return {**delivery["headers"], "webhook-signature": signature}


def test_rotating_answers_a_new_secret_once_and_reads_never_show_it(
    api, owner, django_assert_max_num_queries
):
    automation = AutomationFactory(org=owner.org)
    old = automation.signing_secret
    # the token, the locked automation, its update (and the transaction's savepoint)
    with django_assert_max_num_queries(5):
        answer = api.post(rotate_url(automation.id), token=owner.token)
    assert answer.status_code == 200, answer.content
    assert answer["Cache-Control"] == "no-store"
    assert set(answer.json()) == {"signingSecret"}
    secret = answer.json()["signingSecret"]
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) == 32
    assert secret != old
    stored = Automation.objects.for_org(owner.org).get(id=automation.id)
    assert (stored.signing_secret, stored.previous_signing_secret) == (secret, old)
    assert stored.secret_rotated_at is not None
    read = api.get(f"/api/automations/{automation.id}", token=owner.token)
    assert secret not in read.content.decode() and old not in read.content.decode()
    again = api.post(rotate_url(automation.id), token=owner.token).json()["signingSecret"]
    stored.refresh_from_db()
    assert (stored.signing_secret, stored.previous_signing_secret) == (again, secret)


def test_the_checks_come_in_the_contracts_order(api, org, owner, other_org):
    automation = AutomationFactory(org=org)
    learner = make_member(org)
    assert_error(api.post(rotate_url(automation.id)), 401, "unauthenticated")
    assert_error(api.post(rotate_url(MISSING), token=learner.token), 403, "permission_denied")
    admin = make_member(org, "admin")
    assert api.post(rotate_url(automation.id), token=admin.token).status_code == 200
    foreign = AutomationFactory(org=other_org)
    assert_foreign_looks_missing(
        api, "POST", rotate_url(foreign.id), rotate_url(MISSING), token=owner.token
    )
    assert_error(api.post(rotate_url("nope"), token=owner.token), 404, "not_found")
    assert Automation.objects.for_org(other_org).get(id=foreign.id).previous_signing_secret == ""


def test_during_the_overlap_each_signature_verifies_with_its_own_secret(api, owner, receiver):
    url, received = receiver
    created = create_hook(api, owner, url)
    old = created["signingSecret"]
    before = deliver(api, owner, created["id"], received)
    assert Webhook(old).verify(before["body"], before["headers"])["automationId"] == created["id"]
    assert len(before["headers"]["webhook-signature"].split(" ")) == 1

    new = api.post(rotate_url(created["id"]), token=owner.token).json()["signingSecret"]
    delivery = deliver(api, owner, created["id"], received)
    first, second = delivery["headers"]["webhook-signature"].split(" ")
    assert first.startswith("v1,") and second.startswith("v1,")
    # The new secret's signature first, then the old one's, each verified by the package.
    Webhook(new).verify(delivery["body"], only(delivery, first))
    Webhook(old).verify(delivery["body"], only(delivery, second))
    for secret, signature in [(new, second), (old, first)]:
        with pytest.raises(WebhookVerificationError):
            Webhook(secret).verify(delivery["body"], only(delivery, signature))
    # A receiver holding either secret accepts the delivery as sent.
    Webhook(new).verify(delivery["body"], delivery["headers"])
    Webhook(old).verify(delivery["body"], delivery["headers"])


def signed_by(delivery: dict, secrets: list[str]) -> dict:
    """``delivery``, having checked it carries one signature per secret, in that order."""
    signatures = delivery["headers"]["webhook-signature"].split(" ")
    assert len(signatures) == len(secrets)
    for secret, signature in zip(secrets, signatures, strict=True):
        Webhook(secret).verify(delivery["body"], only(delivery, signature))
    return delivery


def test_rolls_within_the_overlap_keep_every_secret_inside_its_window_signing(
    api, owner, receiver, settings
):
    """A double click on "Roll secret": the first secret still signs beside the two new ones
    (three signatures at most); a third roll drops the oldest, and a secret whose window
    has passed signs no more."""
    url, received = receiver
    created = create_hook(api, owner, url)
    first = created["signingSecret"]
    second = api.post(rotate_url(created["id"]), token=owner.token).json()["signingSecret"]
    third = api.post(rotate_url(created["id"]), token=owner.token).json()["signingSecret"]
    delivery = signed_by(deliver(api, owner, created["id"], received), [third, second, first])

    fourth = api.post(rotate_url(created["id"]), token=owner.token).json()["signingSecret"]
    delivery = signed_by(deliver(api, owner, created["id"], received), [fourth, third, second])
    with pytest.raises(WebhookVerificationError):
        Webhook(first).verify(delivery["body"], delivery["headers"])

    # The second was replaced first: once its window has passed, it signs no more.
    settings.LMS_WEBHOOK_SECRET_OVERLAP_SECONDS = 3600
    stored = Automation.objects.for_org(owner.org).filter(id=created["id"])
    stored.update(older_rotated_at=timezone.now() - timedelta(seconds=3601))
    delivery = deliver(api, owner, created["id"], received)
    signatures = delivery["headers"]["webhook-signature"].split(" ")
    assert len(signatures) == 2
    with pytest.raises(WebhookVerificationError):
        Webhook(second).verify(delivery["body"], delivery["headers"])


def test_after_the_overlap_only_the_new_secret_signs(api, owner, receiver, settings):
    url, received = receiver
    created = create_hook(api, owner, url)
    old = created["signingSecret"]
    new = api.post(rotate_url(created["id"]), token=owner.token).json()["signingSecret"]
    settings.LMS_WEBHOOK_SECRET_OVERLAP_SECONDS = 3600
    Automation.objects.for_org(owner.org).filter(id=created["id"]).update(
        secret_rotated_at=timezone.now() - timedelta(seconds=3601)
    )
    delivery = deliver(api, owner, created["id"], received)
    assert len(delivery["headers"]["webhook-signature"].split(" ")) == 1
    Webhook(new).verify(delivery["body"], delivery["headers"])
    with pytest.raises(WebhookVerificationError):
        Webhook(old).verify(delivery["body"], delivery["headers"])


def test_the_secret_reaches_no_log_line_and_a_patch_never_writes_it(api, owner, caplog):
    automation = AutomationFactory(org=owner.org)
    with caplog.at_level(logging.DEBUG):
        secret = api.post(rotate_url(automation.id), token=owner.token).json()["signingSecret"]
        logging.getLogger("lms.test").info("leaked %s", secret)
    formatter = JsonFormatter()
    lines = [formatter.format(record) for record in caplog.records]
    assert lines and not [line for line in lines if secret in line or secret[12:] in line]
    with CaptureQueriesContext(connection) as captured:
        changed = api.request(
            "PATCH", f"/api/automations/{automation.id}", {"name": "Renamed"}, token=owner.token
        )
    assert changed.status_code == 200
    updates = [q["sql"] for q in captured.captured_queries if q["sql"].startswith("UPDATE")]
    assert updates and not [sql for sql in updates if secret in sql or "signing_secret" in sql]
