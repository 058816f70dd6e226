"""9.2 `sendEmail`: the accept link (LMS_INVITE_URL with the token) is e-mailed by the task
worker after the invite commits, retried on the automations' schedule while the mail server
is down, never failing the request. Mail goes to Django's in-memory outbox; the tasks are
run by the database worker's own task runner in this process."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta

import pytest
from django.conf import settings
from django.core import mail
from django.utils import timezone
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from organizations.models import Invite, Membership
from organizations.services import reissue_invite, revoke_pending_invite
from tests.helpers import make_member
from tests.organizations.servers import ROOT, base_env

pytestmark = pytest.mark.django_db

URL = "/api/organizations/invites"
TASK = "organizations.tasks.send_invite_email"
LINK = "https://learn.example.com/join/{token}?from=mail"


@pytest.fixture(autouse=True)
def _mail(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.LMS_INVITE_URL = LINK
    settings.LMS_AUTOMATION_RETRY_BASE_SECONDS = 10


@pytest.fixture
def owner(org):
    return make_member(org, Membership.Role.OWNER)


def invite(api, owner, django_capture_on_commit_callbacks, **changes) -> dict:
    body = {
        "email": "grace@example.com",
        "firstName": "Grace",
        "lastName": "Hopper",
        "sendEmail": True,
    } | changes
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(URL, body, token=owner.token)
    assert response.status_code == 201, response.content
    return response.json()


def run_worker() -> None:
    """The database worker's own loop, until no task is due: each due task claimed and run
    by ``Worker.run_task`` (the command's loop would also close this test's connection
    between tasks, which holds the test's transaction)."""
    worker = Worker(
        queue_names=[settings.LMS_TASKS_QUEUE],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="test-worker",
        excluded_queue_names=[],
    )
    while (result := DBTaskResult.objects.ready().get_locked()) is not None:
        result.claim(worker.worker_id)
        worker.run_task(result)


def tasks() -> list[DBTaskResult]:
    return list(DBTaskResult.objects.filter(task_path=TASK).order_by("enqueued_at"))


def test_the_worker_mails_the_accept_link_after_the_commit(
    api, org, owner, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        body = {"email": "Grace@Example.com", "firstName": "Grace", "lastName": "Hopper"}
        answer = api.post(URL, body | {"sendEmail": True}, token=owner.token).json()
    assert not tasks()  # nothing is handed over before the commit
    for callback in callbacks:
        callback()
    (task,) = tasks()
    # The queue holds no usable token.
    assert answer["token"] not in json.dumps(task.args_kwargs)
    assert mail.outbox == []

    run_worker()

    (message,) = mail.outbox
    assert message.to == ["grace@example.com"]
    assert message.subject == f"You are invited to join {org.name}"
    link = LINK.replace("{token}", answer["token"])
    assert link in message.body and "Hello Grace," in message.body
    task.refresh_from_db()
    assert task.status == "SUCCESSFUL"
    # The link's token is the invite's: it reads the invite.
    assert api.get(f"{URL}/{answer['token']}").status_code == 200


def test_without_send_email_nothing_is_mailed(api, owner, django_capture_on_commit_callbacks):
    invite(api, owner, django_capture_on_commit_callbacks, sendEmail=False)
    assert not tasks()
    run_worker()
    assert mail.outbox == []


def test_a_refused_invite_mails_nothing(api, owner, django_capture_on_commit_callbacks):
    invite(api, owner, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        conflict = api.post(
            URL,
            {"email": "grace@example.com", "firstName": "G", "lastName": "H", "sendEmail": True},
            token=owner.token,
        )
    assert conflict.status_code == 409
    assert len(tasks()) == 1


def test_a_mail_server_that_is_down_delays_the_mail_on_the_automations_schedule(
    api, owner, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = "tests.organizations.mail_backends.DownBackend"
    answer = invite(api, owner, django_capture_on_commit_callbacks)  # the request is fine
    run_worker()
    first, second = tasks()
    assert first.status == "SUCCESSFUL"  # the attempt is over; the next one waits its turn
    assert second.args_kwargs["kwargs"]["attempt"] == 2
    delay = (second.run_after - first.finished_at).total_seconds()
    assert 9 <= delay <= 10.5  # LMS_AUTOMATION_RETRY_BASE_SECONDS
    run_worker()  # not due yet: nothing happens
    assert len(tasks()) == 2 and mail.outbox == []

    DBTaskResult.objects.filter(id=second.id).update(run_after=timezone.now())
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"  # back up
    run_worker()
    (message,) = mail.outbox
    assert LINK.replace("{token}", answer["token"]) in message.body


def test_after_the_last_attempt_the_task_fails(
    api, owner, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = "tests.organizations.mail_backends.DownBackend"
    settings.LMS_AUTOMATION_RETRY_BASE_SECONDS = 0
    invite(api, owner, django_capture_on_commit_callbacks)
    for _ in range(settings.LMS_AUTOMATION_ATTEMPTS):
        DBTaskResult.objects.filter(task_path=TASK).update(run_after=timezone.now())
        run_worker()
    attempts = tasks()
    assert [t.args_kwargs["kwargs"]["attempt"] for t in attempts] == [1, 2, 3, 4, 5]
    assert [t.status for t in attempts] == ["SUCCESSFUL"] * 4 + ["FAILED"]
    assert mail.outbox == []


def test_an_invite_revoked_or_reissued_before_the_worker_runs_is_not_mailed(
    api, org, owner, django_capture_on_commit_callbacks
):
    revoked = invite(api, owner, django_capture_on_commit_callbacks)
    revoke_pending_invite(org_id=org.id, invite_id=revoked["id"])
    reissued = invite(api, owner, django_capture_on_commit_callbacks, email="ada@example.com")
    reissue_invite(
        invite=Invite.objects.for_org(org).get(id=reissued["id"]),
        expires_at=timezone.now() + timedelta(days=1),
    )
    run_worker()
    assert mail.outbox == []
    assert [t.status for t in tasks()] == ["SUCCESSFUL", "SUCCESSFUL"]


@pytest.mark.processes
def test_an_invite_url_without_a_place_for_the_token_stops_the_start():
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=base_env(LMS_INVITE_URL="https://learn.example.com/join/"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "LMS_INVITE_URL must hold {token}" in done.stderr
