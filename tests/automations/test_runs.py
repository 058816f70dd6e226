"""Events record runs (CONTRACT 7.2): one per enabled automation of the organization and
trigger, in the event's transaction, handed to the worker on commit; the actions, executed
here in-process one attempt at a time (the worker tests run them in a real worker)."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core import mail
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from automations import runs
from automations.actions import render
from automations.models import AutomationRun, AutomationRunAction
from learn.models import Enrollment
from learn.services import enroll
from tests.automations.factories import AutomationFactory, make_run, welcome_email
from tests.factories import UserFactory
from tests.helpers import at_once, make_member
from tests.learn.factories import ActivityFactory, CourseFactory

pytestmark = pytest.mark.django_db


def complete(api, member, activity):
    body = {"activity": str(activity.id), "reports": [{"type": "complete"}]}
    response = api.post("/api/learn/progress", body, token=member.token)
    assert response.status_code == 200, response.content


@pytest.fixture
def course(org):
    return CourseFactory(org=org)


@pytest.fixture
def two_activities(course):
    first = ActivityFactory(org=course.org, module__course=course)
    return first, ActivityFactory(org=course.org, module=first.module)


@pytest.fixture
def enrolled(learner, course):
    Enrollment.objects.create(org=course.org, course=course, membership=learner.membership)
    return learner


def test_a_first_completion_records_one_run_per_enabled_automation(
    api, org, other_org, enrolled, two_activities
):
    on = AutomationFactory(org=org, trigger="activity.completed")
    AutomationFactory(org=org, trigger="activity.completed", enabled=False)
    AutomationFactory(org=org, trigger="enrollment.created")
    AutomationFactory(org=other_org, trigger="activity.completed")
    activity = two_activities[0]
    complete(api, enrolled, activity)
    complete(api, enrolled, activity)  # re-reporting is no new event
    (run,) = AutomationRun.objects.for_org(org)
    assert run.automation_id == on.id and run.status == "pending" and run.depth == 0
    assert run.event_data == {
        "activityId": str(activity.id),
        "courseId": str(activity.course_id),
        "memberId": str(enrolled.membership.id),
        "email": enrolled.user.email,
    }
    pending = {"status": "pending", "attempts": 0, "lastError": None, "response": None}
    assert run.actions == [{"type": a["type"], "input": a["input"], **pending} for a in on.actions]
    assert not AutomationRun.objects.for_org(other_org).exists()


def test_a_run_keeps_the_actions_as_they_were_at_the_event(api, org, enrolled, two_activities):
    automation = AutomationFactory(org=org, trigger="activity.completed")
    complete(api, enrolled, two_activities[0])
    automation.actions = [welcome_email(subject="Changed")]
    automation.save()
    (run,) = AutomationRun.objects.for_org(org)
    assert run.actions[0]["input"]["subject"] == "Welcome!"


def test_emitting_costs_the_same_queries_whatever_the_number_of_automations(api, org):
    counts = []
    for number in (1, 6):
        AutomationRun.objects.for_org(org).delete()
        for _ in range(number - AutomationFactory._meta.model.objects.for_org(org).count()):
            AutomationFactory(org=org, trigger="activity.completed")
        member, course = make_member(org), CourseFactory(org=org)
        enroll(membership=member.membership, course=course)
        activity = ActivityFactory(org=org, module__course=course)
        ActivityFactory(org=org, module=activity.module)
        with CaptureQueriesContext(connection) as captured:
            complete(api, member, activity)
        assert AutomationRun.objects.for_org(org).count() == number
        counts.append(len(captured))
    assert counts[0] == counts[1]


def test_the_hand_off_is_one_task_after_the_commit(
    api, org, enrolled, two_activities, django_capture_on_commit_callbacks
):
    for _ in range(3):
        AutomationFactory(org=org, trigger="activity.completed")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        complete(api, enrolled, two_activities[0])
    assert len(callbacks) == 1
    (task,) = DBTaskResult.objects.all()
    assert task.task_path == "automations.tasks.start_runs"
    assert sorted(task.args_kwargs["kwargs"]["run_ids"]) == sorted(
        str(r.id) for r in AutomationRun.objects.for_org(org)
    )


def test_enrolling_is_an_event_once(org, learner, course, recorded_events):
    enroll(membership=learner.membership, course=course)
    enroll(membership=learner.membership, course=course)
    assert [e.type for e in recorded_events] == ["enrollment.created"]
    assert recorded_events[0].data["courseId"] == str(course.id)


def test_events_deeper_than_the_limit_start_no_run(org, learner, course):
    AutomationFactory(org=org, trigger="enrollment.created")
    other = CourseFactory(org=org)
    enroll(membership=learner.membership, course=course, depth=runs.MAX_DEPTH)
    enroll(membership=learner.membership, course=other, depth=runs.MAX_DEPTH + 1)
    assert [r.depth for r in AutomationRun.objects.for_org(org)] == [runs.MAX_DEPTH]


def test_the_admin_enrolls_through_the_service(org, learner, course, recorded_events):
    staff = Client()
    staff.force_login(UserFactory(is_staff=True, is_superuser=True))
    answer = staff.post(
        "/admin/learn/enrollment/add/",
        {"course": str(course.id), "membership": str(learner.membership.id)},
    )
    assert answer.status_code == 302, answer.content[:2000]
    assert [e.type for e in recorded_events] == ["enrollment.created"]
    assert Enrollment.objects.for_org(org).filter(membership=learner.membership).count() == 1


def _run(org, trigger, actions, data):
    automation = AutomationFactory(org=org, trigger=trigger, actions=actions)
    return make_run(automation, event_data=data)


def test_send_email_renders_the_placeholders_as_text(settings, org, learner, course):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    learner.user.first_name = "<b>{{ org.name }}</b>"
    learner.user.save()
    email = welcome_email(
        subject="Hi {{ learner.firstName }}\n{{course.title}}",
        body="{{ org.name }}: {{ course.title }} {{ nope }}{{ activity.title }}.",
    )
    data = {"courseId": str(course.id), "memberId": str(learner.membership.id)}
    run = _run(org, "enrollment.created", [email], {**data, "email": learner.user.email})
    runs.execute(run.id)
    run.refresh_from_db()
    assert run.status == "succeeded", run.actions
    (sent,) = mail.outbox
    assert sent.to == [learner.user.email]
    assert sent.subject == f"Hi <b>{{{{ org.name }}}}</b> {course.title}"
    assert sent.body == f"{org.name}: {course.title} ."
    assert render("{{x}}{{ y }}", {"y": "{{x}}"}) == "{{x}}"


def test_a_failed_attempt_waits_for_the_next_and_then_fails_the_run(settings, org, learner):
    settings.LMS_AUTOMATION_RETRY_BASE_SECONDS = 10
    hook = {"type": "webhook", "input": {"url": "http://127.0.0.1:9/hook"}}
    run = _run(org, "enrollment.created", [hook, welcome_email()], {"email": "a@example.com"})
    runs.execute(run.id)
    run.refresh_from_db()
    assert run.status == "running" and run.actions[0]["attempts"] == 1
    # loopback, not allowed by default
    assert run.actions[0]["lastError"] == "refused: not a public address"
    assert timedelta(seconds=9) < run.due_at - timezone.now() <= timedelta(seconds=10)
    runs.execute(run.id)  # not due yet: nothing happens
    run.refresh_from_db()
    assert run.actions[0]["attempts"] == 1
    for _ in range(4):
        AutomationRun.objects.for_org(org).update(due_at=timezone.now())
        runs.execute(run.id)
    run.refresh_from_db()
    assert run.status == "failed" and run.finished_at is not None
    assert [(a["status"], a["attempts"]) for a in run.actions] == [("failed", 5), ("skipped", 0)]


def test_the_sweep_enqueues_runs_overdue_by_a_lease(settings, org, learner):
    settings.LMS_AUTOMATION_LEASE_SECONDS = 60
    lost = _run(org, "enrollment.created", [welcome_email()], {"email": "a@example.com"})
    fresh = _run(org, "enrollment.created", [welcome_email()], {"email": "b@example.com"})
    AutomationRun.objects.for_org(org).filter(id=lost.id).update(
        status="running", due_at=timezone.now() - timedelta(seconds=61)
    )
    assert runs.sweep_runs() == 1
    assert runs.sweep_runs() == 0  # due again a lease later
    (task,) = DBTaskResult.objects.all()
    assert task.args_kwargs["kwargs"] == {"run_id": str(lost.id)}
    assert fresh.id != lost.id


def test_the_admin_shows_runs_read_only_filtered_by_automation_status_and_trigger(org, learner):
    run = _run(org, "enrollment.created", [welcome_email()], {"email": "seen@example.com"})
    other = _run(org, "course.completed", [welcome_email()], {"email": "other@example.com"})
    staff = Client()
    staff.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = staff.get(
        "/admin/automations/automationrun/",
        {"automation__id__exact": str(run.automation_id), "status": "pending"},
    )
    assert page.status_code == 200
    assert f"{run.id}/change/" in page.content.decode()
    assert f"{other.id}/change/" not in page.content.decode()
    page = staff.get("/admin/automations/automationrun/", {"trigger": "course.completed"})
    assert f"{other.id}/change/" in page.content.decode()
    assert f"{run.id}/change/" not in page.content.decode()
    detail = staff.get(f"/admin/automations/automationrun/{run.id}/change/")
    assert detail.status_code == 200 and "seen@example.com" in detail.content.decode()
    assert b'name="_save"' not in detail.content
    assert staff.get("/admin/automations/automationrun/add/").status_code == 403


def test_an_automation_links_to_its_own_runs(org, learner):
    run = _run(org, "enrollment.created", [welcome_email()], {"email": "seen@example.com"})
    other = _run(org, "enrollment.created", [welcome_email()], {"email": "other@example.com"})
    staff = Client()
    staff.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = staff.get(f"/admin/automations/automation/{run.automation_id}/change/").content.decode()
    link = f"/admin/automations/automationrun/?automation__id__exact={run.automation_id}"
    assert f'href="{link}"' in page
    runs_page = staff.get(link).content.decode()
    assert f"{run.id}/change/" in runs_page
    assert f"{other.id}/change/" not in runs_page


def test_a_failed_run_is_retried_by_the_command(org, learner):
    from django.core.management import call_command

    run = _run(org, "enrollment.created", [welcome_email()], {"email": "a@example.com"})
    run.status = "failed"
    run.save()
    AutomationRunAction.objects.create(org=org, run=run, index=0, status="failed", attempts=5)
    assert run.actions[0]["attempts"] == 5
    call_command("retry_automation_run", str(run.id))
    run.refresh_from_db()
    assert run.status == "pending" and run.actions[0]["attempts"] == 0
    runs.execute(run.id)
    run.refresh_from_db()
    assert run.status == "succeeded"


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "10.1.2.3", "192.168.0.10", "169.254.169.254", "::1", "localhost"]
)
def test_webhooks_to_private_addresses_are_refused_by_default(settings, host):
    from automations.actions import ActionFailed, _public_address

    with pytest.raises(ActionFailed, match=r"^refused: not a public address$"):
        _public_address(host, 80)
    settings.LMS_WEBHOOK_ALLOW_PRIVATE = True
    assert _public_address(host, 80)


def test_a_redirect_is_a_failed_attempt_not_followed(settings, org, learner):
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    hits = []

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            hits.append(self.path)
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(302)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = HTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.handle_request, daemon=True).start()
    settings.LMS_WEBHOOK_ALLOW_PRIVATE = True
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    run = _run(org, "enrollment.created", [{"type": "webhook", "input": {"url": url}}], {})
    runs.execute(run.id)
    server.server_close()
    run.refresh_from_db()
    assert hits == ["/hook"]
    (action,) = run.actions
    assert action["status"] == "running" and action["response"]["status"] == 302
    assert "302" in action["lastError"]


def test_custom_headers_cannot_replace_the_deliverys_own(settings, org):
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    seen = []

    class Receiver(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            seen.append(self.headers)
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(204)
            self.end_headers()

    server = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.handle_request, daemon=True).start()
    settings.LMS_WEBHOOK_ALLOW_PRIVATE = True
    headers = {"Webhook-Id": "forged", "Content-Type": "text/plain", "X-Source": "lms"}
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    hook = {"type": "webhook", "input": {"url": url, "headers": headers}}
    run = _run(org, "enrollment.created", [hook], {})
    runs.execute(run.id)
    server.server_close()
    (received,) = seen
    assert received.get_all("webhook-id") == [f"msg_{run.id.hex}_0"]
    assert received.get_all("content-type") == ["application/json"]
    assert received["x-source"] == "lms"


def _execute_tasks_per_run() -> dict[str, int]:
    counts: dict[str, int] = {}
    for task in DBTaskResult.objects.filter(task_path="automations.tasks.execute_run"):
        run_id = task.args_kwargs["kwargs"]["run_id"]
        counts[run_id] = counts.get(run_id, 0) + 1
    return counts


def test_while_no_worker_takes_them_the_sweep_enqueues_each_run_once_per_lease_and_less(
    settings, api, org
):
    """Item: a worker lagging by more than a lease. 30 runs recorded by events (their
    hand-off task waits, nobody consumes it); sweeps several times a lease for eight leases:
    each run is enqueued once in its first lease overdue, then at doubling intervals."""
    settings.LMS_AUTOMATION_LEASE_SECONDS = 60
    for _ in range(30):
        AutomationFactory(org=org, trigger="enrollment.created")
    member, course = make_member(org), CourseFactory(org=org)
    enroll(membership=member.membership, course=course)
    waiting = AutomationRun.objects.for_org(org)
    assert waiting.count() == 30

    def later(seconds: float) -> None:  # time passes: every stored time moves back
        shift = timedelta(seconds=seconds)
        for run in waiting.all():
            run.due_at -= shift
            run.enqueued_at = run.enqueued_at and run.enqueued_at - shift
            run.save(update_fields=["due_at", "enqueued_at"])

    assert runs.sweep_runs() == 0  # not overdue yet
    later(61)
    assert runs.sweep_runs() == 30
    for _ in range(5):  # several sweeps within the lease
        later(10)
        assert runs.sweep_runs() == 0
    counts = _execute_tasks_per_run()
    assert sorted(counts) == sorted(str(r.id) for r in waiting) and set(counts.values()) == {1}
    swept = 1
    for _ in range(6 * 8):  # eight more leases, a sweep every 10 s
        later(10)
        swept += runs.sweep_runs() // 30
    # Overdue by 1 lease, then 2, 4, 8 leases: 4 tasks each, where one every lease made 9.
    assert swept == 4
    assert set(_execute_tasks_per_run().values()) == {4}
    # A worker takes a run: it is no longer waiting, and dies; a lease later it is swept.
    assert runs.claim() is not None
    later(121)
    assert runs.sweep_runs() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite serializes all writes")
def test_sweeps_at_the_same_time_enqueue_each_run_once(settings, org):
    settings.LMS_AUTOMATION_LEASE_SECONDS = 60
    automation = AutomationFactory(org=org)
    overdue = timezone.now() - timedelta(seconds=120)
    AutomationRun.objects.bulk_create(
        AutomationRun(
            org=org,
            automation=automation,
            revision_id=automation.revision_id,
            trigger=automation.trigger,
            event_id=AutomationRun().id,
            occurred_at=overdue,
            due_at=overdue,
            enqueued_at=overdue,
        )
        for _ in range(300)
    )
    swept = at_once([lambda client: runs.sweep_runs() for _ in range(4)])
    assert sum(swept) == 300
    counts = _execute_tasks_per_run()
    assert len(counts) == 300 and set(counts.values()) == {1}


def test_the_sweep_deletes_task_results_finished_longer_ago_than_kept(settings):
    """A burst of test sends once left hundreds of task rows that nothing deleted: each sweep
    deletes those finished more than LMS_TASK_RESULTS_KEEP_SECONDS ago, never a task still
    waiting or running, nor one finished recently."""
    settings.LMS_TASK_RESULTS_KEEP_SECONDS = 3600
    now = timezone.now()

    def task(status: str, finished_ago: float | None) -> DBTaskResult:
        return DBTaskResult.objects.create(
            status=status,
            args_kwargs={"args": [], "kwargs": {}},
            task_path="automations.tasks.execute_run",
            backend_name="default",
            run_after=now,
            finished_at=None if finished_ago is None else now - timedelta(seconds=finished_ago),
        )

    old = [task("SUCCESSFUL", 3700), task("FAILED", 7200)]
    kept = [task("SUCCESSFUL", 60), task("READY", None), task("RUNNING", None)]
    out = io.StringIO()
    call_command("sweep_automation_runs", stdout=out)
    assert "Deleted 2 finished task result(s)." in out.getvalue()
    remaining = set(DBTaskResult.objects.values_list("id", flat=True))
    assert remaining == {t.id for t in kept} and not remaining & {t.id for t in old}
