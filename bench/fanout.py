"""What one learner's completing progress report costs when many automations at the limits
(CONTRACT 8.9) follow ``course.completed``, and what the worker writes per attempt.

Run against an empty PostgreSQL database (it migrates it), from the root of the code to
measure (``PYTHONPATH=<root>`` to measure another checkout with this venv):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lms_fanout_bench \\
        .venv/bin/python bench/fanout.py [--automations 50] [--learners 5]

Prints one JSON object. WAL is read cluster-wide (``pg_current_wal_insert_lsn``), so other
databases' writes can only add to it: the minimum over the learners is the figure. The
relations' growth (``pg_total_relation_size`` of the automations' tables, TOAST included)
is this database's alone.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import statistics
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lms.settings")
sys.path.insert(0, os.getcwd())

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

ACTIONS = 20
INPUT_BYTES = 16 * 1024


def action_at_the_limit(seed: int) -> dict:
    """A send_email whose input is 16 KiB of JSON, incompressible (TOAST cannot shrink it)."""
    rest = {"to": "learner", "subject": "Hi {{ learner.firstName }}", "body": ""}
    room = INPUT_BYTES - len(json.dumps(rest, separators=(",", ":")))
    body = base64.b64encode(random.Random(seed).randbytes(room))[:room].decode()
    return {"type": "send_email", "input": {**rest, "body": body}}


def wal() -> int:
    with connection.cursor() as cursor:
        cursor.execute("select pg_current_wal_insert_lsn() - '0/0'::pg_lsn")
        return int(cursor.fetchone()[0])


def relations_size() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "select coalesce(sum(pg_total_relation_size(c.oid)), 0) from pg_class c "
            "where c.relkind = 'r' and c.relname like 'automations%%'"
        )
        return int(cursor.fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--automations", type=int, default=50)
    parser.add_argument("--learners", type=int, default=5)
    args = parser.parse_args()
    settings.ALLOWED_HOSTS = ["*"]
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    call_command("migrate", verbosity=0)

    from django.test import Client

    from automations import runs
    from automations.models import Automation, AutomationRun
    from learn.models import Activity, Course, Enrollment, Module
    from organizations.models import Membership, Organization
    from organizations.services import add_member, create_api_token

    org = Organization.objects.create(name=f"Fan-out {time.time_ns()}")
    course = Course.objects.create(org=org, title="At the limits", published=True)
    part = {"org": org, "course": course, "seq": 1, "published": True}
    module = Module.objects.create(**part, title="The module")
    activity = Activity.objects.create(**part, module=module, title="The activity")
    for number in range(args.automations):
        Automation.objects.create(
            org=org,
            name=f"At the limits {number}",
            trigger="course.completed",
            actions=[action_at_the_limit(number * ACTIONS + i) for i in range(ACTIONS)],
        )
    client = Client()
    body = json.dumps({"activity": str(activity.id), "reports": [{"type": "complete"}]})
    timings, wals, grown = [], [], []
    for number in range(args.learners + 1):  # the first warms up
        learner = add_member(
            org=org, email=f"learner-{number}@{org.id}.example", role=Membership.Role.LEARNER
        )
        token = create_api_token(membership=learner, name="fanout")[1]
        Enrollment.objects.create(org=org, course=course, membership=learner)
        size, lsn = relations_size(), wal()
        started = time.perf_counter()
        response = client.post(
            "/api/learn/progress",
            body,
            content_type="application/json",
            headers={"Authorization": f"Bearer {token}"},
        )
        elapsed = time.perf_counter() - started
        lsn, size = wal() - lsn, relations_size() - size
        assert response.status_code == 200, response.content[:500]
        timings.append(elapsed * 1000)
        wals.append(lsn)
        grown.append(size)
    runs_recorded = AutomationRun.objects.for_org(org).count()
    assert runs_recorded == args.automations * (args.learners + 1), runs_recorded

    # The worker: one run of 20 actions, one attempt each (all succeed).
    attempts = [(0, 0, 0)] if not args.automations else []
    for run_id in AutomationRun.objects.for_org(org).values_list("id", flat=True)[:3]:
        size, lsn = relations_size(), wal()
        started = time.perf_counter()
        runs.execute(run_id)
        elapsed = time.perf_counter() - started
        attempts.append(
            ((wal() - lsn) / ACTIONS, (relations_size() - size) / ACTIONS, elapsed * 1000)
        )
        assert AutomationRun.objects.for_org(org).get(id=run_id).status == "succeeded"
    print(
        json.dumps(
            {
                "automations": args.automations,
                "actionsEach": ACTIONS,
                "inputBytes": INPUT_BYTES,
                "report": {
                    "medianMs": round(statistics.median(timings[1:]), 1),
                    "minWalBytes": min(wals[1:]),
                    "medianRelationsGrowthBytes": statistics.median(grown[1:]),
                },
                "attempt": {
                    "minWalBytes": round(min(a[0] for a in attempts)),
                    "medianRelationsGrowthBytes": round(statistics.median(a[1] for a in attempts)),
                },
                "runOf20Attempts": {
                    "medianMs": round(statistics.median(a[2] for a in attempts), 1),
                },
            }
        )
    )


if __name__ == "__main__":
    main()
