"""Automations run in a real worker process (CONTRACT 7.2), on the suite's database engine:
gunicorn answers the request that causes an event, db_worker executes the run, and a real
HTTP receiver on the loopback gets the signed webhooks. Once more on Redis with rqworker; the
tests of a worker killed mid-delivery, of a slow receiver and of a database outage run on
both task backends."""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import os
import socket
import time

import pytest

from harness.hostile import HostileReceiver, send, silent, then, trickle
from harness.workers import SETUP, Receiver, deployment, wait_for
from tests.throwaway_postgres import throwaway_postgres

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]
_numbers = itertools.count(1)


@pytest.fixture(scope="module")
def receiver():
    found = Receiver()
    yield found
    found.close()


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    with deployment(tmp_path_factory.mktemp("worker")) as deployed:
        yield deployed


def world(stack) -> dict:
    return stack.django(SETUP % {"n": f"{os.getpid()}-{next(_numbers)}"})


def create(stack, w, trigger: str, actions: list, **fields) -> dict:
    body = {"name": f"{trigger} {next(_numbers)}", "trigger": trigger, "actions": actions}
    status, created = stack.call("POST", "/api/automations", w["owner"], {**body, **fields})
    assert status == 201, created
    return created


def hook(receiver, path: str, **fields) -> dict:
    return {"type": "webhook", "input": {"url": receiver.url + path, **fields}}


def complete(stack, w, activity: str) -> tuple[int, float]:
    started = time.monotonic()
    status, answer = stack.call(
        "POST",
        "/api/learn/progress",
        w["learner"],
        {"activity": activity, "reports": [{"type": "complete"}]},
    )
    assert status == 200, answer
    return answer, time.monotonic() - started


def verify(secret: str, delivery: dict) -> dict:
    """A receiver's check of a Standard Webhooks signature (as docs/api.md shows it)."""
    headers = delivery["headers"]
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode()
    expected = base64.b64encode(hmac.new(key, signed + delivery["body"], hashlib.sha256).digest())
    signatures = [s.split(",", 1)[1] for s in headers["webhook-signature"].split()]
    assert any(hmac.compare_digest(expected.decode(), s) for s in signatures)
    assert abs(time.time() - int(headers["webhook-timestamp"])) < 60
    return json.loads(delivery["body"])


def finished(stack, w, automation_id: str, count: int = 1, timeout: float = 20):
    def done():
        rows = stack.runs(w["owner"], automation_id)
        return rows if len(rows) == count and all(r["finishedAt"] for r in rows) else None

    return wait_for(done, timeout=timeout, what="the runs to finish")


def test_an_activity_completed_once_sends_one_signed_webhook(stack, receiver):
    w = world(stack)
    path = f"/ok/{next(_numbers)}"
    created = create(
        stack, w, "activity.completed", [hook(receiver, path, headers={"X-Source": "lms"})]
    )
    activity = w["courses"][0]["activity"]
    answer, _ = complete(stack, w, activity)
    assert answer["status"] == "completed"
    wait_for(lambda: receiver.to(path), what="the webhook")
    complete(stack, w, activity)  # re-reporting a completed activity is no new event
    (run,) = finished(stack, w, created["id"])
    time.sleep(0.5)
    (delivery,) = receiver.to(path)
    payload = verify(created["signingSecret"], delivery)
    assert delivery["method"] == "POST" and delivery["headers"]["x-source"] == "lms"
    assert payload["type"] == "activity.completed" and payload["runId"] == run["id"]
    assert payload["automationId"] == created["id"] and payload["timestamp"].endswith("Z")
    assert payload["data"] == {
        "activityId": activity,
        "courseId": w["courses"][0]["id"],
        "memberId": w["member"],
        "email": payload["data"]["email"],
    }
    assert run["status"] == "succeeded"
    (action,) = run["actions"]
    assert action["status"] == "succeeded" and action["attempts"] == 1
    assert action["response"]["status"] == 200 and action["lastError"] is None


def test_the_request_does_not_wait_for_the_actions(stack, receiver):
    w = world(stack)
    path = f"/hold/{next(_numbers)}"  # the receiver does not answer while this test runs
    create(stack, w, "activity.completed", [hook(receiver, path)])
    _, took = complete(stack, w, w["courses"][0]["activity"])
    wait_for(lambda: receiver.to(path), what="the webhook")
    receiver.release(path)
    assert took < 2.0  # the delivery was still unanswered when the request had answered


def test_a_test_send_fails_in_the_worker_then_a_retry_after_a_rotation_delivers_it(stack, receiver):
    """CONTRACT 8.8 end to end: a test send of a disabled automation is executed by the
    worker; against a receiver answering 500 its run fails after the last attempt; the
    secret is rolled; once the receiver recovers, a retry delivers the same webhook-id,
    signed with the new secret and the old one."""
    w = world(stack)
    path = f"/down/{next(_numbers)}"
    created = create(stack, w, "course.completed", [hook(receiver, path)], enabled=False)
    status, run = stack.call("POST", f"/api/automations/{created['id']}/test", w["owner"])
    assert status == 202, run
    assert run["event"]["test"] is True and run["status"] == "pending"
    (failed,) = finished(stack, w, created["id"])
    assert failed["status"] == "failed" and failed["actions"][0]["attempts"] == 5
    assert failed["actions"][0]["response"]["status"] == 500
    status, rolled = stack.call(
        "POST", f"/api/automations/{created['id']}/rotate-secret", w["owner"]
    )
    assert status == 200, rolled
    receiver.recover(path)
    retry = f"/api/automations/{created['id']}/runs/{run['id']}/retry"
    status, retried = stack.call("POST", retry, w["owner"])
    assert status == 202 and retried["status"] == "pending", retried
    wait_for(lambda: len(receiver.to(path)) == 6, what="the retried delivery")
    (done,) = finished(stack, w, created["id"])
    assert done["status"] == "succeeded" and done["event"]["test"] is True
    deliveries = receiver.to(path)
    assert len({d["headers"]["webhook-id"] for d in deliveries}) == 1
    last = deliveries[-1]
    assert len(last["headers"]["webhook-signature"].split()) == 2
    assert verify(rolled["signingSecret"], last)["type"] == "course.completed"
    assert verify(created["signingSecret"], last)["data"]["memberId"]
    status, again = stack.call("POST", retry, w["owner"])
    assert status == 409 and again["error"] == "conflict"


def test_a_receiver_failing_once_is_retried_with_the_same_webhook_id(stack, receiver):
    w = world(stack)
    path = f"/fail-once/{next(_numbers)}"
    created = create(stack, w, "activity.completed", [hook(receiver, path, method="PUT")])
    complete(stack, w, w["courses"][0]["activity"])
    (run,) = finished(stack, w, created["id"])
    first, second = receiver.to(path)
    assert first["headers"]["webhook-id"] == second["headers"]["webhook-id"]
    assert second["at"] - first["at"] >= 0.2  # LMS_AUTOMATION_RETRY_BASE_SECONDS
    verify(created["signingSecret"], second)
    assert run["status"] == "succeeded" and run["actions"][0]["attempts"] == 2
    assert second["method"] == "PUT"


def test_a_disabled_automation_does_not_run(stack, receiver):
    w = world(stack)
    on, off = f"/ok/{next(_numbers)}", f"/ok/{next(_numbers)}"
    disabled = create(stack, w, "activity.completed", [hook(receiver, off)], enabled=False)
    enabled = create(stack, w, "activity.completed", [hook(receiver, on)])
    complete(stack, w, w["courses"][0]["activity"])
    finished(stack, w, enabled["id"])
    assert receiver.to(off) == [] and stack.runs(w["owner"], disabled["id"]) == []


def test_course_completed_and_invite_accepted_each_run_once(stack, receiver):
    w = world(stack)
    course_path, invite_path = f"/ok/{next(_numbers)}", f"/ok/{next(_numbers)}"
    on_course = create(stack, w, "course.completed", [hook(receiver, course_path)])
    on_invite = create(stack, w, "invite.accepted", [hook(receiver, invite_path)])
    complete(stack, w, w["courses"][0]["activity"])
    complete(stack, w, w["courses"][0]["activity"])
    status, accepted = stack.call("POST", f"/api/organizations/invites/{w['invite']}/accept", "")
    assert status == 201, accepted
    status, _ = stack.call("POST", f"/api/organizations/invites/{w['invite']}/accept", "")
    assert status == 410
    (course_run,) = finished(stack, w, on_course["id"])
    (invite_run,) = finished(stack, w, on_invite["id"])
    time.sleep(0.3)
    (course_delivery,) = receiver.to(course_path)
    (invite_delivery,) = receiver.to(invite_path)
    assert (
        verify(on_course["signingSecret"], course_delivery)["data"]["courseId"]
        == (w["courses"][0]["id"])
    )
    assert verify(on_invite["signingSecret"], invite_delivery)["data"]["email"].startswith("new-")
    assert course_run["status"] == invite_run["status"] == "succeeded"


def test_automations_enrolling_into_each_others_courses_end(stack, receiver):
    w = world(stack)
    first, second = (course["id"] for course in w["courses"])
    into_second = create(
        stack,
        w,
        "enrollment.created",
        [{"type": "enroll_in_course", "input": {"courseId": second}}],
    )
    into_first = create(
        stack, w, "enrollment.created", [{"type": "enroll_in_course", "input": {"courseId": first}}]
    )
    # A new member is enrolled in the first course (depth 0): the chain enrolls them in the
    # second (depth 1), after which every enrollment already exists.
    code = (
        "import json\nfrom learn.models import Course\nfrom learn.services import enroll\n"
        "from organizations.services import add_member\n"
        f"course = Course.objects.filter(org_id='{w['org']}', id='{first}').get()\n"
        f"member = add_member(org=course.org, email='chain-{first}@example.com', role='learner')\n"
        "enroll(membership=member, course=course)\nprint(json.dumps({'ok': True}))\n"
    )
    stack.django(code)
    runs_second = finished(stack, w, into_second["id"], count=2)
    runs_first = finished(stack, w, into_first["id"], count=2)
    depths = sorted(r["depth"] for r in runs_second + runs_first)
    assert depths == [0, 0, 1, 1]
    assert {r["status"] for r in runs_second + runs_first} == {"succeeded"}


@pytest.mark.parametrize("backend", ["database", "rq"])
def test_a_worker_killed_mid_run_loses_no_run(request, receiver, backend):
    stack = request.getfixturevalue("rq_stack" if backend == "rq" else "stack")
    w = world(stack)
    path = f"/hold/{next(_numbers)}"
    created = create(stack, w, "activity.completed", [hook(receiver, path)])
    complete(stack, w, w["courses"][0]["activity"])
    wait_for(lambda: receiver.to(path), what="the first delivery")  # the worker is mid-run
    stack.kill_worker()
    receiver.release(path)
    stack.start_worker()
    # The lease (4 s) runs out, the sweep enqueues the run again and the new worker runs it.
    (run,) = finished(stack, w, created["id"])
    first, second = receiver.to(path)
    assert first["headers"]["webhook-id"] == second["headers"]["webhook-id"]
    assert run["status"] == "succeeded" and run["actions"][0]["attempts"] == 2


def _failed_attempt(stack, w, automation_id: str):
    def seen():
        (run,) = stack.runs(w["owner"], automation_id) or [None]
        return run and run["actions"][0]["lastError"] and run["actions"][0]

    return seen


@pytest.mark.parametrize("backend", ["database", "rq"])
def test_a_receiver_trickling_for_40_s_delays_another_organizations_delivery_by_one_deadline(
    tmp_path, receiver, backend
):
    """One worker, the deadline as deployed (10 s): a receiver that sends its body one byte
    every 2 s for 40 s fails its attempt at the deadline, and another organization's delivery,
    caused just after, waits for that one attempt and no longer."""
    trickler = HostileReceiver(
        then(send(b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n"), trickle(b"x" * 20, every=2))
    )
    settings = {
        "LMS_WEBHOOK_DEADLINE_SECONDS": "10",
        "LMS_AUTOMATION_LEASE_SECONDS": "60",
        "LMS_AUTOMATION_RETRY_BASE_SECONDS": "10",
    }
    try:
        with deployment(tmp_path, **settings, **_backend(backend)) as stack:
            slow_org, other_org = world(stack), world(stack)
            hook_to_slow = {"type": "webhook", "input": {"url": trickler.url + "/slow"}}
            slow = create(stack, slow_org, "activity.completed", [hook_to_slow])
            path = f"/ok/{next(_numbers)}"
            create(stack, other_org, "activity.completed", [hook(receiver, path)])
            complete(stack, slow_org, slow_org["courses"][0]["activity"])
            wait_for(lambda: trickler.connections, what="the slow delivery")
            attempt_started = trickler.connections[0]["opened"]
            complete(stack, other_org, other_org["courses"][0]["activity"])
            caused = time.monotonic()
            (delivered,) = wait_for(lambda: receiver.to(path), timeout=30, what="the other")
            assert delivered["at"] - caused < 12
            action = wait_for(_failed_attempt(stack, slow_org, slow["id"]), every=0.2)
            assert time.monotonic() - attempt_started < 12.5
            assert action["lastError"] == "No complete answer within 10 s."
            assert action["attempts"] == 1 and action["status"] == "running"
    finally:
        trickler.close()


@pytest.mark.parametrize("backend", ["database", "rq"])
def test_one_organizations_retries_do_not_hold_up_anothers_new_run(tmp_path, receiver, backend):
    """One worker, a 1 s deadline: six automations of one organization call a receiver that
    never answers, so by the time their first attempts are over their retries are due, one
    after another. Another organization's new run, caused then, waits for the attempt under
    way and no retry (before, the database backend handed out every due retry first, and
    RQ the retries that had reached its queue before it)."""
    tarpit = HostileReceiver(silent)
    settings = {
        "LMS_WEBHOOK_DEADLINE_SECONDS": "1",
        "LMS_AUTOMATION_LEASE_SECONDS": "30",
        "LMS_AUTOMATION_RETRY_BASE_SECONDS": "0.1",
    }
    try:
        with deployment(tmp_path, **settings, **_backend(backend)) as stack:
            busy_org, other_org = world(stack), world(stack)
            for _ in range(6):
                create(stack, busy_org, "activity.completed", [hook(tarpit, "/never")])
            path = f"/ok/{next(_numbers)}"
            create(stack, other_org, "activity.completed", [hook(receiver, path)])
            complete(stack, busy_org, busy_org["courses"][0]["activity"])
            wait_for(lambda: len(tarpit.connections) >= 6, timeout=20, what="first attempts")
            time.sleep(0.5)  # the retries of the first five are due, some in the queue
            complete(stack, other_org, other_org["courses"][0]["activity"])
            caused = time.monotonic()
            (delivered,) = wait_for(lambda: receiver.to(path), timeout=40, what="the new run")
            assert delivered["at"] - caused < 2.5  # the attempt under way (1 s), and no retry
    finally:
        tarpit.close()


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["database", "rq"])
def test_a_database_outage_stops_no_automation_for_good(tmp_path, receiver, backend):
    """PostgreSQL goes away for 8 s under the worker and the sweep (a server of the test's
    own), with a delivery under way. The sweep waits and goes on, saying so in one line; a
    worker that exits is started again, as `make run` does; the run under way completes, and
    so does one caused afterwards."""
    with (
        throwaway_postgres() as server,
        deployment(
            tmp_path,
            server=server.url,
            keep_running=True,
            LMS_CONN_HEALTH_CHECKS="true",
            **_backend(backend),
        ) as stack,
    ):
        w = world(stack)
        held = f"/hold/{next(_numbers)}"
        before = create(stack, w, "activity.completed", [hook(receiver, held)])
        later = f"/ok/{next(_numbers)}"
        after = create(stack, w, "invite.accepted", [hook(receiver, later)])
        complete(stack, w, w["courses"][0]["activity"])
        wait_for(lambda: receiver.to(held), what="the delivery under way")
        sweep = stack.sweep.pid
        server.stop()
        receiver.release(held)  # the attempt ends while its outcome cannot be saved
        time.sleep(8)
        server.start()
        status, accepted = stack.call(
            "POST", f"/api/organizations/invites/{w['invite']}/accept", ""
        )
        assert status == 201, accepted
        (run_before,) = finished(stack, w, before["id"], timeout=40)
        (run_after,) = finished(stack, w, after["id"], timeout=40)
        assert run_before["status"] == run_after["status"] == "succeeded"
        first, *again = receiver.to(held)
        assert again and {d["headers"]["webhook-id"] for d in again} == {
            first["headers"]["webhook-id"]
        }
        assert len(receiver.to(later)) == 1
        assert stack.sweep.pid == sweep and stack.sweep.poll() is None  # never exited
        outage_lines = [
            line
            for line in stack.sweep_log.read_text().splitlines()
            if "could not reach the database" in line
        ]
        assert outage_lines and all(json.loads(line)["level"] for line in outage_lines)


# --- the same flow on Redis, with RQ's worker ------------------------------------------------


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


def _backend(backend: str) -> dict[str, str]:
    """The deployment's settings for a task backend; skips (or, with LMS_REQUIRE_REDIS=true,
    fails) an RQ test when Redis is not there."""
    if backend != "rq":
        return {}
    if not _redis_up():
        if os.environ.get("LMS_REQUIRE_REDIS", "").lower() == "true":
            pytest.fail("Redis is not reachable on 127.0.0.1:6379 and LMS_REQUIRE_REDIS=true")
        pytest.skip("Redis is not reachable on 127.0.0.1:6379 (LMS_REQUIRE_REDIS=true to fail)")
    return {"backend": "rq", "REDIS_URL": "redis://127.0.0.1:6379/0"}


@pytest.fixture(scope="module")
def rq_stack(tmp_path_factory):
    with deployment(tmp_path_factory.mktemp("rq"), **_backend("rq")) as deployed:
        yield deployed


def test_on_redis_a_completion_sends_one_signed_webhook_retried_once(rq_stack, receiver):
    w = world(rq_stack)
    path = f"/fail-once/{next(_numbers)}"
    created = create(rq_stack, w, "activity.completed", [hook(receiver, path)])
    complete(rq_stack, w, w["courses"][0]["activity"])
    complete(rq_stack, w, w["courses"][0]["activity"])
    (run,) = finished(rq_stack, w, created["id"])
    first, second = receiver.to(path)
    assert first["headers"]["webhook-id"] == second["headers"]["webhook-id"]
    verify(created["signingSecret"], second)
    assert run["status"] == "succeeded" and run["actions"][0]["attempts"] == 2


def test_a_webhook_to_a_private_address_is_refused_by_default(tmp_path, receiver):
    """A deployment as deployed (no LMS_WEBHOOK_ALLOW_PRIVATE) never sends to the loopback:
    a URL naming it is refused at save, and one saved before (or whose name resolves there)
    fails every attempt saying why, the run ends failed, and the receiver hears nothing."""
    with deployment(tmp_path, LMS_WEBHOOK_ALLOW_PRIVATE="false") as stack:
        w = world(stack)
        path = f"/ok/{next(_numbers)}"
        body = {"name": "Loopback", "trigger": "activity.completed"}
        status, refused = stack.call(
            "POST", "/api/automations", w["owner"], {**body, "actions": [hook(receiver, path)]}
        )
        assert status == 400 and set(refused["details"]) == {"actions.0.input.url"}
        # As an automation saved before the check was made at save: in the database alone.
        created = stack.django(
            "import json\n"
            "from automations.models import Automation\n"
            f"a = Automation.objects.create(org_id={w['org']!r}, name='Loopback',\n"
            "    trigger='activity.completed',\n"
            f"    actions=[{{'type': 'webhook', 'input': {{'url': {receiver.url + path!r}}}}}])\n"
            "print(json.dumps({'id': str(a.id)}))\n"
        )
        complete(stack, w, w["courses"][0]["activity"])
        (run,) = finished(stack, w, created["id"])
    assert run["status"] == "failed"
    (action,) = run["actions"]
    assert action["status"] == "failed" and action["attempts"] == 5
    assert action["lastError"] == "refused: not a public address"
    assert receiver.to(path) == []
