"""CONTRACT 8.8: a test send records a run for an example event, executed like any other
(its e-mails to the caller, its enrolments skipped), and a failed run is retried from its
first action that did not succeed, its webhooks keeping their `webhook-id`. Runs are
executed here in-process as the worker does; webhooks go to a receiver on the loopback."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core import mail
from django.core.management import CommandError, call_command
from django_tasks_db.models import DBTaskResult

from automations import runs
from automations.models import AutomationRun
from automations.selectors import example_event_data
from learn.models import Enrollment
from learn.services import enroll
from tests.automations.factories import AutomationFactory, welcome_email
from tests.factories import UserFactory
from tests.helpers import assert_error, assert_foreign_looks_missing, make_member
from tests.learn.factories import ActivityFactory, CourseFactory

pytestmark = pytest.mark.django_db
MISSING = "01900000-0000-7000-8000-000000000000"
EVENT_DATA = {
    "enrollment.created": {"enrollmentId", "courseId", "memberId", "email"},
    "activity.completed": {"activityId", "courseId", "memberId", "email"},
    "course.completed": {"courseId", "memberId", "email"},
    "invite.accepted": {"inviteId", "memberId", "email", "invitedBy"},
}


@pytest.fixture(autouse=True)
def _mail(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


@pytest.fixture
def receiver(settings):
    """Answers ``state["status"]`` to every delivery and records it."""
    settings.LMS_WEBHOOK_ALLOW_PRIVATE = True  # the receiver is on the loopback
    state = {"status": 200, "received": [], "bodies": []}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state["received"].append({k.lower(): v for k, v in self.headers.items()})
            state["bodies"].append(json.loads(body))
            body = b"down for maintenance" if state["status"] >= 400 else b"ok"
            self.send_response(state["status"])
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}/hook"
    yield state
    server.shutdown()
    server.server_close()


def sending_url(automation_id) -> str:
    return f"/api/automations/{automation_id}/test"


def retry_url(automation_id, run_id) -> str:
    return f"/api/automations/{automation_id}/runs/{run_id}/retry"


def runs_of(api, owner, automation_id) -> list[dict]:
    page = api.get(f"/api/automations/{automation_id}/runs", token=owner.token)
    assert page.status_code == 200, page.content
    return page.json()["rows"]


# --- test sends ------------------------------------------------------------------------------


def test_a_test_send_writes_to_the_caller_and_enrolls_nobody_even_when_disabled(
    api, org, django_assert_max_num_queries
):
    admin = make_member(org, "admin")
    course = CourseFactory(org=org)
    automation = AutomationFactory(
        org=org,
        trigger="enrollment.created",
        enabled=False,
        actions=[
            welcome_email(subject="Hello {{ learner.email }}"),
            {"type": "enroll_in_course", "input": {"courseId": str(course.id)}},
            welcome_email(to="hr@example.com", subject="To HR"),
        ],
    )
    # the token, the automation, the organization's test sends (the first of a minute also
    # purges stale counts, in a savepoint), its example course, the run's insert, then the
    # answer's action rows and revision (and the transaction's savepoint)
    with django_assert_max_num_queries(12):
        answer = api.post(sending_url(automation.id), token=admin.token)
    assert answer.status_code == 202, answer.content
    run = answer.json()
    assert run["automationId"] == str(automation.id) and run["status"] == "pending"
    assert run["event"]["test"] is True and run["event"]["type"] == "enrollment.created"
    assert set(run["event"]["data"]) == EVENT_DATA["enrollment.created"]
    assert run["event"]["data"]["memberId"] == str(admin.membership.id)
    assert run["event"]["data"]["courseId"] == str(course.id)
    assert [a["status"] for a in run["actions"]] == ["pending"] * 3

    runs.execute(run["id"])
    (listed,) = runs_of(api, admin, automation.id)
    assert listed["id"] == run["id"] and listed["status"] == "succeeded"
    assert listed["event"]["test"] is True
    assert [a["status"] for a in listed["actions"]] == ["succeeded", "skipped", "succeeded"]
    assert [m.to for m in mail.outbox] == [[admin.user.email], [admin.user.email]]
    assert mail.outbox[0].subject == f"Hello {admin.user.email}"
    assert not Enrollment.objects.for_org(org).exists()


@pytest.mark.parametrize("trigger", sorted(EVENT_DATA))
def test_the_example_event_has_the_data_of_its_trigger(api, owner, trigger):
    activity = ActivityFactory(org=owner.org, module__course__org=owner.org)
    actions = [welcome_email(to="inviter" if trigger == "invite.accepted" else "learner")]
    automation = AutomationFactory(org=owner.org, trigger=trigger, actions=actions)
    event = api.post(sending_url(automation.id), token=owner.token).json()["event"]
    assert event["type"] == trigger and event["test"] is True
    assert set(event["data"]) == EVENT_DATA[trigger]
    assert event["data"]["email"] == owner.user.email
    if "activityId" in event["data"]:
        assert event["data"]["activityId"] == str(activity.id)
        assert event["data"]["courseId"] == str(activity.course_id)


def test_a_test_event_takes_the_course_the_automation_is_aimed_at(api, owner):
    CourseFactory(org=owner.org)
    aimed = CourseFactory(org=owner.org)
    automation = AutomationFactory(
        org=owner.org, trigger="course.completed", conditions={"courseIds": [str(aimed.id)]}
    )
    event = api.post(sending_url(automation.id), token=owner.token).json()["event"]
    assert event["data"]["courseId"] == str(aimed.id)


def test_a_test_run_is_handed_to_the_worker_after_the_commit(
    api, owner, django_capture_on_commit_callbacks
):
    automation = AutomationFactory(org=owner.org)
    with django_capture_on_commit_callbacks(execute=True):
        run = api.post(sending_url(automation.id), token=owner.token).json()
    (task,) = DBTaskResult.objects.all()
    assert task.task_path == "automations.tasks.start_runs"
    assert task.args_kwargs["kwargs"]["run_ids"] == [run["id"]]


def test_test_sends_beyond_the_organizations_limit_are_throttled_and_record_nothing(
    api, owner, other_org, settings
):
    """CONTRACT 8.8: LMS_TEST_SENDS_PER_MINUTE per organization in any 60 seconds, whichever
    automation; beyond it 429 throttled with Retry-After, and no run. Another organization
    still sends."""
    settings.LMS_TEST_SENDS_PER_MINUTE = 3
    automations = [AutomationFactory(org=owner.org) for _ in range(2)]
    statuses = [
        api.post(sending_url(automations[n % 2].id), token=owner.token).status_code
        for n in range(3)
    ]
    assert statuses == [202] * 3
    refused = api.post(sending_url(automations[1].id), token=owner.token)
    assert_error(refused, 429, "throttled")
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert AutomationRun.objects.for_org(owner.org).count() == 3
    other = make_member(other_org, "owner")
    elsewhere = AutomationFactory(org=other_org)
    assert api.post(sending_url(elsewhere.id), token=other.token).status_code == 202


def test_a_test_webhook_says_test_and_carries_the_callers_own_data(api, owner, receiver):
    activity = ActivityFactory(org=owner.org, module__course__org=owner.org)
    hook = [{"type": "webhook", "input": {"url": receiver["url"]}}]
    automation = AutomationFactory(org=owner.org, trigger="activity.completed", actions=hook)
    run = api.post(sending_url(automation.id), token=owner.token).json()
    runs.execute(run["id"])
    [body] = receiver["bodies"]
    assert body["test"] is True and body["type"] == "activity.completed"
    assert body["data"] == {
        "activityId": str(activity.id),
        "courseId": str(activity.course_id),
        "memberId": str(owner.membership.id),
        "email": owner.user.email,
    }
    # A real event's body is as it was: no "test" key.
    real = AutomationFactory(org=owner.org, trigger="enrollment.created", actions=hook)
    enroll(membership=make_member(owner.org).membership, course=activity.course)
    (done,) = runs_of(api, owner, real.id)
    runs.execute(done["id"])
    assert "test" not in receiver["bodies"][1] and receiver["bodies"][1]["data"]["memberId"]


def test_a_staff_user_of_no_membership_tests_with_an_example_member_id(org):
    automation = AutomationFactory(org=org, trigger="course.completed")
    user = UserFactory(is_staff=True, is_superuser=True)
    data = example_event_data(org=org, automation=automation, caller=user)
    assert data["memberId"] is not None and data["email"] == user.email


def test_real_runs_have_no_test_mark(api, owner):
    automation = AutomationFactory(org=owner.org)
    enroll(membership=make_member(owner.org).membership, course=CourseFactory(org=owner.org))
    (run,) = runs_of(api, owner, automation.id)
    assert "test" not in run["event"]


# --- retries ---------------------------------------------------------------------------------


def failed_run(api, owner, receiver, settings) -> tuple[str, dict]:
    """An automation (an e-mail, then a webhook) whose run failed at the webhook: the
    receiver answered 500 to its one attempt."""
    settings.LMS_AUTOMATION_ATTEMPTS = 1
    body = {
        "name": "Tell HR",
        "trigger": "enrollment.created",
        "actions": [welcome_email(), {"type": "webhook", "input": {"url": receiver["url"]}}],
    }
    created = api.post("/api/automations", body, token=owner.token)
    assert created.status_code == 201, created.content
    automation_id = created.json()["id"]
    enroll(membership=make_member(owner.org).membership, course=CourseFactory(org=owner.org))
    (run,) = runs_of(api, owner, automation_id)
    receiver["status"] = 500
    runs.execute(run["id"])
    (run,) = runs_of(api, owner, automation_id)
    assert run["status"] == "failed"
    assert [a["status"] for a in run["actions"]] == ["succeeded", "failed"]
    return automation_id, run


def test_a_failed_run_runs_again_from_its_failed_action_keeping_the_webhook_id(
    api, owner, receiver, settings, django_assert_max_num_queries
):
    automation_id, run = failed_run(api, owner, receiver, settings)
    assert run["actions"][1]["response"]["body"] == "down for maintenance"
    receiver["status"] = 200
    # the token, the automation, the locked run with its revision's types, the delete of
    # the failed action's row, the run's update, the answer's action rows (and savepoints)
    with django_assert_max_num_queries(10):
        answer = api.post(retry_url(automation_id, run["id"]), token=owner.token)
    assert answer.status_code == 202, answer.content
    retried = answer.json()
    assert retried["id"] == run["id"] and retried["status"] == "pending"
    assert retried["finishedAt"] is None
    assert [a["status"] for a in retried["actions"]] == ["succeeded", "pending"]
    runs.execute(run["id"])
    (done,) = runs_of(api, owner, automation_id)
    assert done["status"] == "succeeded"
    assert [(a["status"], a["attempts"]) for a in done["actions"]] == [
        ("succeeded", 1),
        ("succeeded", 1),
    ]
    assert len(mail.outbox) == 1  # the e-mail that succeeded is not sent again
    first, second = receiver["received"]
    assert first["webhook-id"] == second["webhook-id"] == f"msg_{run['id'].replace('-', '')}_1"


def test_only_a_failed_run_is_retried(api, owner, receiver, settings):
    automation_id, run = failed_run(api, owner, receiver, settings)
    assert api.post(retry_url(automation_id, run["id"]), token=owner.token).status_code == 202
    error = assert_error(
        api.post(retry_url(automation_id, run["id"]), token=owner.token), 409, "conflict"
    )
    assert "pending" in error["message"]
    assert AutomationRun.objects.for_org(owner.org).get(id=run["id"]).status == "pending"
    with pytest.raises(CommandError, match="Only a failed run"):
        call_command("retry_automation_run", run["id"])


def test_the_command_retries_through_the_same_service(api, owner, receiver, settings):
    automation_id, run = failed_run(api, owner, receiver, settings)
    call_command("retry_automation_run", run["id"])
    (again,) = runs_of(api, owner, automation_id)
    assert again["status"] == "pending"
    assert [a["status"] for a in again["actions"]] == ["succeeded", "pending"]


def test_a_run_of_another_automation_or_organization_looks_missing(
    api, owner, other_org, receiver, settings
):
    automation_id, run = failed_run(api, owner, receiver, settings)
    other = AutomationFactory(org=owner.org)
    assert_foreign_looks_missing(
        api,
        "POST",
        retry_url(other.id, run["id"]),
        retry_url(other.id, MISSING),
        token=owner.token,
    )
    assert_error(api.post(retry_url(automation_id, "nope"), token=owner.token), 404, "not_found")
    assert AutomationRun.objects.for_org(owner.org).get(id=run["id"]).status == "failed"


@pytest.mark.parametrize("operation", ["test", "retry"])
def test_the_checks_come_in_the_contracts_order(api, org, operation):
    automation = AutomationFactory(org=org)
    url = sending_url(automation.id) if operation == "test" else retry_url(automation.id, MISSING)
    assert_error(api.post(url), 401, "unauthenticated")
    for role in ("instructor", "learner"):
        member = make_member(org, role)
        assert_error(api.post(url, token=member.token), 403, "permission_denied")
    missing = sending_url(MISSING) if operation == "test" else retry_url(MISSING, MISSING)
    assert_error(api.post(missing, token=make_member(org, "owner").token), 404, "not_found")
    assert not AutomationRun.objects.for_org(org).exists()
