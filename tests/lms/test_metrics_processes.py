"""/metrics under the production server: gunicorn with 2 workers, each counting in its own
process, and a task worker in a third. Every scrape, whichever worker answers it, sums them
all (prometheus-client's multiprocess mode, gunicorn.conf.py's hooks)."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from harness.processes import get, gunicorn_server
from tests.organizations.servers import base_env, run_django

pytestmark = pytest.mark.processes

TOKEN = "metrics-token-for-the-processes-test"
SETUP = """
import json
from io import StringIO
from django.core.management import call_command
call_command("migrate", verbosity=0)
out = StringIO()
call_command("create_organization", "Metrics Academy", "--owner", "o@metrics.example",
             "--json", stdout=out)
print(json.dumps({"token": json.loads(out.getvalue())["owner"]["token"]}))
"""
# A task worker's process: it finishes a run, as `manage.py db_worker` would.
RUN_ONE = """
from django.utils import timezone
from automations import runs
from automations.models import Automation, AutomationRun
from organizations.models import Organization
org = Organization.objects.get()
automation = Automation.objects.create(org=org, name="Hi", trigger="enrollment.created",
    actions=[{"type": "send_email", "input": {"to": "learner", "subject": "Hi", "body": "."}}])
run = AutomationRun.objects.create(org=org, automation=automation, trigger="enrollment.created",
    event_id=automation.id, occurred_at=timezone.now(), event_data={"email": "a@example.com"},
    revision_id=automation.revision_id, due_at=timezone.now())
runs.execute(run.id)
"""


def scrape(port: int) -> dict[tuple, float]:
    status, _, body = get(port, "/metrics", {"Authorization": f"Bearer {TOKEN}"})
    assert status == 200, body[:500]
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


BUNDLES = ("lms_requests_total", (("method", "GET"), ("route", "/api/bundles"), ("status", "200")))
RUNS = ("lms_automation_runs_total", (("status", "succeeded"), ("trigger", "enrollment.created")))


def counting_pids(folder: Path) -> set[int]:
    return {int(path.stem.rpartition("_")[2]) for path in folder.glob("counter_*.db")}


def test_every_scrape_sums_the_counts_of_every_process(tmp_path):
    env = base_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        LMS_VAR_DIR=str(tmp_path),
        LMS_METRICS_TOKEN=TOKEN,
    )
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    token = json.loads(run_django(SETUP, env).strip().splitlines()[-1])["token"]
    folder = tmp_path / "metrics"
    auth = {"Authorization": f"Bearer {token}"}
    with gunicorn_server(env, log_path=tmp_path / "gunicorn.log", workers=2) as server:
        for _ in range(40):  # a new connection each: the kernel spreads them over the workers
            assert get(server.port, "/api/bundles", auth)[0] == 200
        # The master's own file holds the series that start at 0 (loaded before the fork).
        workers = counting_pids(folder) - {server.proc.pid}
        assert len(workers) == 2, workers  # both workers answered some, and counted them
        assert {scrape(server.port)[BUNDLES] for _ in range(10)} == {40}
        # Each worker's own process series, whichever worker answers the scrape.
        memory = {
            dict(labels)["pid"]: value
            for (name, labels), value in scrape(server.port).items()
            if name == "process_resident_memory_bytes"
        }
        assert {str(pid) for pid in workers} <= set(memory) and min(memory.values()) > 0

        run_django(RUN_ONE, env)  # another process, as a task worker on this machine
        assert scrape(server.port)[RUNS] == 1

        # A worker that dies keeps its counts: its replacement starts from zero beside them.
        counted = counting_pids(folder)
        os.kill(workers.pop(), signal.SIGKILL)
        deadline = time.monotonic() + 20
        sent = 0
        while counting_pids(folder) == counted and time.monotonic() < deadline:
            try:
                sent += get(server.port, "/api/bundles", auth)[0] == 200
            except OSError:  # queued on the dead worker's own socket (SO_REUSEPORT)
                time.sleep(0.05)
        assert len(counting_pids(folder) - counted) == 1  # the replacement counted too
        assert scrape(server.port)[BUNDLES] == 40 + sent

    # A server started again counts from zero (the files of processes gone are removed).
    with gunicorn_server(env, log_path=tmp_path / "gunicorn-2.log", workers=2) as server:
        assert get(server.port, "/api/bundles", auth)[0] == 200
        assert scrape(server.port)[BUNDLES] == 1
        assert scrape(server.port)[RUNS] == 0  # there from the start, at 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_database_pools_state_is_answered_per_worker(tmp_path):
    from django.db import connection

    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    env = base_env(
        DATABASE_URL=url,
        LMS_VAR_DIR=str(tmp_path),
        LMS_METRICS_TOKEN=TOKEN,
        LMS_DB_POOL="true",
        LMS_DB_POOL_MIN="2",
    )
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    with gunicorn_server(env, log_path=tmp_path / "gunicorn.log", workers=2) as server:
        for _ in range(20):  # each worker opens its pool
            assert get(server.port, "/readyz")[0] == 200
        workers = counting_pids(tmp_path / "metrics") - {server.proc.pid}
        assert workers
        samples = scrape(server.port)
        sizes = {
            dict(labels)["pid"]: value
            for (name, labels), value in samples.items()
            if name == "lms_db_pool_size" and dict(labels)["database"] == "default"
        }
        assert {str(pid) for pid in workers} <= set(sizes), (workers, sizes)
        assert all(size >= 2 for size in sizes.values()), sizes
        assert any(name == "lms_db_requests_waiting" for name, _ in samples)
