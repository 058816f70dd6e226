"""Benchmark of enrolling 500 members in one call (CONTRACT 9.3) on PostgreSQL, with
automations on ``enrollment.created`` enabled (not part of the test suite).

    createdb -h 127.0.0.1 -U postgres lms_enrolment_bench
    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/lms_enrolment_bench
    .venv/bin/python bench/enrolment.py

It migrates the database it is given, loads the members once (``bench.members.generate``),
gives the organization three enabled automations on ``enrollment.created``, and then, for
each case, times ``POST /api/learn/courses/{courseId}/enrollments`` through the whole Django
stack in-process (middleware, token lookup, view, the enrolment service, the events and the
automations' runs, the commit and the hand-off of the runs to the task queue; no socket),
each round on a new course so that every member is new to it. It prints the median and p95
and the queries of one request; enrolling one member, timed in the same rounds, is the
baseline. See docs/performance.md for the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lms.settings")

import django

django.setup()

import logging  # noqa: E402

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from automations.models import Automation, AutomationRun  # noqa: E402
from bench.bundles import p95  # noqa: E402
from bench.members import generate  # noqa: E402
from learn.models import Course  # noqa: E402
from organizations.models import Membership, Organization  # noqa: E402
from organizations.services import add_member, create_api_token  # noqa: E402

ORG_NAME = "Enrolment Bench"
AUTOMATIONS = 3
ACTIONS = [
    {
        "type": "send_email",
        "input": {"to": "learner", "subject": "Welcome", "body": "Glad to have you."},
    }
]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=500, help="Members per call.")
    parser.add_argument("--rounds", type=int, default=15, help="Timed calls per case.")
    return parser.parse_args()


def organization(size: int) -> tuple[Organization, str, list[Membership]]:
    org = Organization.objects.filter(name=ORG_NAME).first() or Organization.objects.create(
        name=ORG_NAME
    )
    learners = Membership.objects.for_org(org).exclude(role=Membership.Role.OWNER)
    if learners.count() < size:
        generate(org, size - learners.count(), seed=3)
    for number in range(AUTOMATIONS - Automation.objects.for_org(org).count()):
        Automation.objects.create(
            org=org, name=f"Welcome {number}", trigger="enrollment.created", actions=ACTIONS
        )
    owner = add_member(org=org, email="owner@enrolment.bench", role=Membership.Role.OWNER)
    _, token = create_api_token(membership=owner, name="bench")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE organizations_membership")
    return org, token, list(learners.select_related("user").order_by("id")[:size])


def enrol(client: Client, org, token: str, body: dict, course=None) -> tuple[float, dict]:
    course = course or Course.objects.create(org=org, title="Bench course", published=True)
    started = time.perf_counter()
    response = client.post(
        f"/api/learn/courses/{course.id}/enrollments",
        body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    elapsed = (time.perf_counter() - started) * 1000
    assert response.status_code == 200, response.content[:300]
    return elapsed, response.json()


def main() -> None:
    args = parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Point DATABASE_URL at a PostgreSQL database of its own (it is filled up).")
    logging.getLogger("lms.access").setLevel(logging.WARNING)
    call_command("migrate", verbosity=0)
    org, token, learners = organization(args.size)
    ids = [str(member.id) for member in learners]
    emails = [member.user.email.upper() for member in learners]
    client = Client()
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        print(f"\n{cursor.fetchone()[0]}")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start")
    print(f"{AUTOMATIONS} enabled automations on enrollment.created\n")

    cases = {
        "1 member by id (baseline)": lambda: enrol(client, org, token, {"memberIds": ids[:1]}),
        f"{args.size} members by id": lambda: enrol(client, org, token, {"memberIds": ids}),
        f"{args.size} members by e-mail": lambda: enrol(client, org, token, {"emails": emails}),
    }
    runs_before = AutomationRun.objects.for_org(org).count()
    for _ in range(2):  # warm up
        for case in cases.values():
            case()
    times: dict[str, list[float]] = {label: [] for label in cases}
    for _ in range(args.rounds):  # the cases in turn, so a noisy neighbour hits all alike
        for label, case in cases.items():
            elapsed, body = case()
            assert body["alreadyEnrolled"] == [], body["alreadyEnrolled"][:3]
            times[label].append(elapsed)
    made = AutomationRun.objects.for_org(org).count() - runs_before
    expected = (args.rounds + 2) * AUTOMATIONS * (1 + 2 * args.size)
    assert made == expected, (made, expected)

    course = Course.objects.create(org=org, title="Bench course", published=True)
    enrol(client, org, token, {"memberIds": ids}, course)
    again = [
        enrol(client, org, token, {"memberIds": ids, "dueAt": "2099-01-01T00:00:00Z"}, course)[0]
        for _ in range(args.rounds)
    ]
    times[f"{args.size} enrolled already, new dueAt"] = again

    queries = {}
    for label, body in (("1", {"memberIds": ids[:1]}), (str(args.size), {"memberIds": ids})):
        counts = []
        for _ in range(2):  # the second with the token remembered, as under load
            with CaptureQueriesContext(connection) as captured:
                enrol(client, org, token, body)
            counts.append(len(captured) - 1)  # the bench's own insert of the course
        queries[label] = min(counts)
    baseline = statistics.median(times["1 member by id (baseline)"])
    print(f"{'case':<40} {'median':>9} {'p95':>9} {'/ baseline':>10}")
    for label, values in times.items():
        median = statistics.median(values)
        print(f"{label:<40} {median:>7.1f}ms {p95(values):>7.1f}ms {median / baseline:>10.1f}")
    print(
        f"\nqueries of one call (BEGIN, COMMIT and the task hand-off included; the token "
        "remembered): "
        f"1 member {queries['1']}, {args.size} members {queries[str(args.size)]}"
    )
    print(f"runs recorded: {made:,}; load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
