"""A real deployment in miniature for the worker tests and the fairness bench: a database of
its own (a SQLite file, or a fresh PostgreSQL database when the suite runs on PostgreSQL),
gunicorn, the task framework's worker process (db_worker, or rqworker on Redis), the sweep,
and an HTTP receiver on the loopback that records every webhook delivery."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from harness.processes import (
    ROOT,
    stop,
    wait_for,  # noqa: F401 (imported from here by the worker tests)
)
from harness.servers import base_env, gunicorn_servers, run_django

_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Receiver:
    """Records deliveries by path. ``/ok/...`` answers 200; ``/fail-once/...`` answers 500
    the first time; ``/hold/...`` keeps the first delivery waiting until ``release()``;
    ``/down/...`` answers 500 until ``recover()``."""

    def __init__(self) -> None:
        self.deliveries: list[dict] = []
        self.lock = threading.Lock()
        self.holds: dict[str, threading.Event] = {}
        self.recovered: set[str] = set()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _handle(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    seen = sum(1 for d in receiver.deliveries if d["path"] == self.path)
                    receiver.deliveries.append(
                        {
                            "path": self.path,
                            "method": self.command,
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "body": body,
                            "at": time.monotonic(),
                        }
                    )
                if self.path.startswith("/hold/") and not seen:
                    with receiver.lock:
                        hold = receiver.holds.setdefault(self.path, threading.Event())
                    hold.wait(30)
                    return  # closed unanswered: the sender sees the connection end
                status = 500 if self.path.startswith("/fail-once/") and not seen else 200
                with receiver.lock:
                    if self.path.startswith("/down/") and self.path not in receiver.recovered:
                        status = 500
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_POST = do_PUT = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def to(self, path: str) -> list[dict]:
        with self.lock:
            return [d for d in self.deliveries if d["path"] == path]

    def recover(self, path: str) -> None:
        with self.lock:
            self.recovered.add(path)

    def release(self, path: str) -> None:
        with self.lock:
            self.holds.setdefault(path, threading.Event()).set()

    def close(self) -> None:
        with self.lock:
            for hold in self.holds.values():
                hold.set()
        self.server.shutdown()


class Stack:
    def __init__(
        self, env: dict[str, str], base: str, worker_args: list[str], keep_running: bool
    ) -> None:
        self.env, self.base, self.worker_args = env, base, worker_args
        # As `make run` starts it: run again whenever it exits (deploy/keep-running).
        self.keep_running = keep_running
        self.worker: subprocess.Popen | None = None
        self.sweep: subprocess.Popen | None = None
        self.logs = Path(env["LMS_VAR_DIR"])
        self.sweep_log = self.logs / "sweep.log"

    def start_worker(self) -> None:
        log = open(self.logs / f"worker-{time.monotonic_ns()}.log", "w")  # noqa: SIM115
        command = [sys.executable, "manage.py", *self.worker_args]
        if self.keep_running:
            command = ["sh", "deploy/keep-running", *command]
        self.worker = subprocess.Popen(
            command,
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            # Its own process group: the worker forks (RQ's scheduler, a job's work horse),
            # and stopping or killing it takes those along.
            start_new_session=True,
        )

    def kill_worker(self) -> None:
        """SIGKILL to the worker and what it forked: no clean-up, as when a machine dies."""
        assert self.worker is not None
        os.killpg(self.worker.pid, signal.SIGKILL)
        self.worker.wait(timeout=10)

    def worker_log(self) -> str:
        return "".join(path.read_text() for path in sorted(self.logs.glob("worker-*.log")))

    def start_sweep(self) -> None:
        log = open(self.sweep_log, "a")  # noqa: SIM115
        self.sweep = subprocess.Popen(
            [sys.executable, "manage.py", "sweep_automation_runs", "--every", "0.5"],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    def stop_sweep(self) -> None:
        if self.sweep is not None and self.sweep.poll() is None:
            self.sweep.terminate()
            self.sweep.wait(10)

    def stop_worker(self) -> None:
        if self.worker is not None:
            stop(self.worker, timeout=10)

    def django(self, code: str) -> dict:
        return json.loads(run_django(code, self.env).strip().splitlines()[-1])

    def call(self, method: str, path: str, token: str, body: dict | None = None):
        request = urllib.request.Request(
            self.base + path,
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with _opener.open(request, timeout=15) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def runs(self, token: str, automation_id: str) -> list[dict]:
        status, page = self.call("GET", f"/api/automations/{automation_id}/runs", token)
        assert status == 200, page
        return page["rows"]


def _postgres_url(name: str, server: str | None) -> str | None:
    url = server or os.environ.get("DATABASE_URL", "").rsplit("/", 1)[0]
    return f"{url}/{name}" if url.startswith("postgres") else None


@contextmanager
def deployment(
    tmp: Path,
    *,
    backend: str = "database",
    server: str | None = None,
    keep_running: bool = False,
    **overrides: str,
):
    """Yields a Stack: database migrated, gunicorn serving, a worker and the sweep running.
    The database is made on the suite's PostgreSQL server (or ``server``, a URL without a
    database name), or is a SQLite file when the suite runs on SQLite."""
    queue = f"lms-test-{uuid.uuid4().hex[:12]}"
    db_name = f"lms_worker_{uuid.uuid4().hex[:10]}"
    pg = _postgres_url(db_name, server)
    with ExitStack() as stack:
        if pg:
            import psycopg

            admin_url = pg.rsplit("/", 1)[0] + "/postgres"
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{db_name}"')

            def drop():
                with psycopg.connect(admin_url, autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')

            stack.callback(drop)
        env = base_env(
            **{
                "DATABASE_URL": pg or f"sqlite:///{tmp / 'db.sqlite3'}",
                "LMS_VAR_DIR": str(tmp),
                "LMS_TOKEN_CACHE_SECONDS": "0",
                # The receiver is on the loopback; a test of the refusal overrides this.
                "LMS_WEBHOOK_ALLOW_PRIVATE": "true",
                "LMS_AUTOMATION_RETRY_BASE_SECONDS": "0.2",
                # Short, to keep the tests short; the lease outlives an attempt, as it must.
                "LMS_WEBHOOK_DEADLINE_SECONDS": "2",
                "LMS_AUTOMATION_LEASE_SECONDS": "4",
                "KEEP_RUNNING_DELAY": "1",
                "LMS_TASKS_BACKEND": backend,
                "LMS_TASKS_QUEUE": queue,
                "LMS_DB_POOL": "false",
                **overrides,
            }
        )
        run_django(
            "from django.core.management import call_command\n"
            "call_command('migrate', verbosity=0)\ncall_command('createcachetable')\n",
            env,
        )
        if backend == "rq":
            worker_args = [
                "rqworker",
                "--with-scheduler",
                "--job-class",
                "django_tasks_rq.Job",
                queue,
            ]
        else:
            worker_args = ["db_worker", "--queue-name", queue, "--interval", "0.05"]
            worker_args += ["--no-startup-delay", "--no-reload"]
        (base,) = stack.enter_context(gunicorn_servers(env, count=1, workers=1))
        deployed = Stack(env, base, worker_args, keep_running)
        deployed.start_worker()
        stack.callback(deployed.stop_worker)
        deployed.start_sweep()
        stack.callback(deployed.stop_sweep)
        yield deployed


SETUP = """
import json
from learn.models import Course, Module, Activity
from learn.services import enroll
from organizations.models import Organization, Membership
from organizations.services import add_member, create_api_token, create_invite
org = Organization.objects.create(name="Org %(n)s")
owner = add_member(org=org, email="owner-%(n)s@example.com", role="owner")
learner = add_member(org=org, email="learner-%(n)s@example.com", role="learner",
                     first_name="Ada")
courses = []
for title in ("First", "Second"):
    course = Course.objects.create(org=org, title=title, published=True)
    module = Module.objects.create(org=org, course=course, seq=1, title="M", published=True)
    activity = Activity.objects.create(org=org, course=course, module=module, seq=1,
                                       title=title + " activity", published=True)
    courses.append({"id": str(course.id), "activity": str(activity.id)})
enroll(membership=learner, course=Course.objects.for_org(org).get(id=courses[0]["id"]))
_, invite = create_invite(org=org, email="new-%(n)s@example.com", first_name="New",
                          last_name="Member", invited_by=owner)
print(json.dumps({
    "org": str(org.id), "owner": create_api_token(membership=owner)[1],
    "learner": create_api_token(membership=learner)[1], "member": str(learner.id),
    "courses": courses, "invite": invite,
}))
"""
