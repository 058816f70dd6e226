"""Benchmark of a course's roster (9.4) and report (9.5) at 100,000 enrolments on PostgreSQL
(not part of the test suite).

    createdb -h 127.0.0.1 -U postgres lms_roster_bench
    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/lms_roster_bench
    .venv/bin/python bench/roster.py

It migrates the database it is given and generates one course of ``--activities`` listed
activities with ``--enrolments`` learners (each a user, a membership and an enrolment; a
due date for two in three of them, past for half of those), their progress (each learner
reported on a random number of the activities in order, all but the last of them completed;
a report row per progress row) and the completions of those who completed every activity;
then the standing of every enrolment and the funnel are computed from those rows by
``learn.standing.refresh_all`` (what the data migration runs), and VACUUM ANALYZE runs as
autovacuum would. A later run reuses the loaded rows (``--reload`` loads them again).

Each case is timed through the whole Django stack in-process (middleware, token lookup,
view, serialization; no socket): every filter with every sort in both directions, on the
first, the middle and the last page, and the report; medians and p95 of the server times,
and the worst case of each filter, are printed. See docs/performance.md for the figures.
"""

from __future__ import annotations

import argparse
import math
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
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402

from learn import standing  # noqa: E402
from learn.models import Activity, ActivityFunnel, Course, Enrollment, Module  # noqa: E402
from organizations.models import Membership, Organization, User  # noqa: E402
from organizations.services import add_member, create_api_token  # noqa: E402

ORG_NAME = "Roster Bench"
SORTS = ["enrolledAt", "completedAt", "progress", "email", "dueAt", "lastActivityAt"]
FILTERS = {
    "no filter": {},
    "status=not-started": {"status": "not-started"},
    "status=in-progress": {"status": "in-progress"},
    "status=completed": {"status": "completed"},
    "overdue=true": {"overdue": "true"},
    "overdue=false": {"overdue": "false"},
    "search, one learner": {"search": "learner4242@"},
    "search, a name (1%)": {"search": "smith"},
}
FIRST_NAMES = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Ken", "Frances"]
LAST_NAMES = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Thompson"]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--enrolments", type=int, default=100_000)
    parser.add_argument("--activities", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=7, help="Timed runs per case.")
    parser.add_argument("--reload", action="store_true", help="Load the rows again.")
    parser.add_argument("--only", help="Run only the cases whose label contains this.")
    return parser.parse_args()


def last_name(index: int) -> str:
    # One learner in a hundred is a Smith: a search that matches about 1% of the roster.
    return "Smith" if index % 100 == 7 else LAST_NAMES[index % len(LAST_NAMES)]


def generate(org: Organization, enrolments: int, activities: int) -> Course:
    """The course, its learners and their progress (see the module's docstring)."""
    course = Course.objects.create(org=org, title="Safety at work", published=True)
    modules = [
        Module.objects.create(org=org, course=course, seq=seq, title=f"Part {seq}", published=True)
        for seq in (1, 2)
    ]
    for index in range(activities):
        Activity.objects.create(
            org=org,
            course=course,
            module=modules[index * 2 // activities],
            seq=index + 1,
            title=f"Lesson {index + 1}",
            published=True,
        )
    started = time.monotonic()
    for first in range(0, enrolments, 10_000):
        batch = range(first, min(first + 10_000, enrolments))
        users = User.objects.bulk_create(
            User(
                email=f"learner{index}@bench.example",
                first_name=FIRST_NAMES[index % len(FIRST_NAMES)],
                last_name=last_name(index),
                password="!",
            )
            for index in batch
        )
        Membership.all_orgs.bulk_create(Membership(org=org, user=user) for user in users)
    print(f"users and memberships: {time.monotonic() - started:.0f}s", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.42)")
        # Enrolled over the past year; two in three have a due date, half of those past.
        cursor.execute(
            """
            INSERT INTO learn_enrollment (id, org_id, created_at, updated_at, membership_id,
                course_id, stage, done, email_key, search_text, due_at)
            SELECT gen_random_uuid(), m.org_id, e.at, e.at, m.id, %s, 0, 0, '', '',
                CASE WHEN random() < 0.33 THEN NULL
                     ELSE now() + (random() - 0.5) * interval '60 days' END
            FROM organizations_membership m,
                LATERAL (SELECT now() - random() * interval '365 days' AS at) e
            WHERE m.org_id = %s AND m.role = 'learner'
            """,
            [course.id, org.id],
        )
        # Each learner reported on the first k activities (k uniform in 0..n), completing
        # all but the k-th; the report times follow the enrolment.
        cursor.execute(
            """
            CREATE TEMP TABLE reach AS
            SELECT e.membership_id, e.created_at,
                floor(random() * (%s + 1))::int AS k
            FROM learn_enrollment e WHERE e.course_id = %s
            """,
            [activities, course.id],
        )
        cursor.execute(
            """
            INSERT INTO learn_progress (id, org_id, created_at, updated_at, membership_id,
                activity_id, status, progress, state, started_at, completed_at)
            SELECT gen_random_uuid(), %s, t.at, t.at, r.membership_id, a.id,
                CASE WHEN a.seq < r.k OR r.k = %s THEN 'completed' ELSE 'in-progress' END,
                CASE WHEN a.seq < r.k OR r.k = %s THEN 1.0 ELSE 0.5 END,
                '{}'::jsonb, t.at,
                CASE WHEN a.seq < r.k OR r.k = %s THEN t.at END
            FROM reach r
            JOIN learn_activity a ON a.course_id = %s AND a.seq <= r.k,
                LATERAL (SELECT r.created_at + a.seq * interval '1 hour' AS at) t
            """,
            [org.id, activities, activities, activities, course.id],
        )
        cursor.execute(
            """
            INSERT INTO learn_progressreport (id, org_id, created_at, updated_at, progress_id,
                position, type, payload, request_id)
            SELECT gen_random_uuid(), org_id, updated_at, updated_at, id, 0, 'time',
                '{"type":"time","seconds":1}', 'bench'
            FROM learn_progress p WHERE p.org_id = %s
            """,
            [org.id],
        )
        cursor.execute(
            """
            INSERT INTO learn_coursecompletion (id, org_id, created_at, updated_at,
                membership_id, course_id, completed_at, position)
            SELECT gen_random_uuid(), %s, r.created_at + %s * interval '1 hour',
                r.created_at + %s * interval '1 hour', r.membership_id, %s,
                r.created_at + %s * interval '1 hour',
                row_number() OVER (ORDER BY r.created_at, r.membership_id)
            FROM reach r WHERE r.k = %s
            """,
            [org.id, activities, activities, course.id, activities, activities],
        )
        # The completions feed's sequence stands at the last position given (9.6).
        cursor.execute(
            """
            INSERT INTO learn_completionsequence (id, org_id, created_at, updated_at, last)
            SELECT gen_random_uuid(), %s, now(), now(), coalesce(max(position), 0)
            FROM learn_coursecompletion WHERE org_id = %s
            """,
            [org.id, org.id],
        )
        cursor.execute("DROP TABLE reach")
    print(f"enrolments, progress and reports: {time.monotonic() - started:.0f}s", flush=True)
    compute_standing(org)
    return course


def compute_standing(org: Organization) -> None:
    """The standing and funnel from the generated rows, as the data migration computes
    them, after ANALYZE (as autovacuum would have run on tables that grew this much)."""
    with connection.cursor() as cursor:
        for table in ("learn_enrollment", "learn_progress", "learn_coursecompletion"):
            cursor.execute(f"ANALYZE {table}")
    computed = time.monotonic()
    with transaction.atomic():
        standing.refresh_all(org.id)
    print(f"standing and funnel (refresh_all): {time.monotonic() - computed:.0f}s", flush=True)


def load(enrolments: int, activities: int, reload: bool) -> tuple[Organization, Course]:
    org = Organization.objects.filter(name=ORG_NAME).first()
    if org is not None and not reload:
        course = Course.objects.for_org(org).first()
        if course and Enrollment.objects.for_org(org).filter(course=course).count() == enrolments:
            print(f"reusing {enrolments:,} enrolments")
            if not ActivityFunnel.objects.for_org(org).exists():  # not computed yet
                compute_standing(org)
            return org, course
    if org is not None:
        with connection.cursor() as cursor:
            for table in ("learn_progressreport", "learn_coursecompletion", "learn_progress"):
                cursor.execute(f"DELETE FROM {table} WHERE org_id = %s", [org.id])
        User.objects.filter(memberships__org=org).delete()
        org.delete()
    org = Organization.objects.create(name=ORG_NAME)
    return org, generate(org, enrolments, activities)


def timed(client: Client, url: str, token: str, query: dict, repeat: int) -> tuple[list, dict]:
    headers = {"Authorization": f"Bearer {token}"}
    for _ in range(2):  # warm the caches and the connection
        client.get(url, query, headers=headers)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url, query, headers=headers)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content[:300]
    return times, response.json()


def p95(times: list[float]) -> float:
    return sorted(times)[max(0, math.ceil(len(times) * 0.95) - 1)]


def main() -> None:
    args = parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Point DATABASE_URL at a PostgreSQL database of its own (it is filled up).")
    logging.getLogger("lms.access").setLevel(logging.WARNING)
    call_command("migrate", verbosity=0)
    org, course = load(args.enrolments, args.activities, args.reload)
    with connection.cursor() as cursor:
        for table in ("learn_enrollment", "learn_progress", "learn_activityfunnel"):
            cursor.execute(f"VACUUM ANALYZE {table}")
        cursor.execute("SELECT version()")
        version = cursor.fetchone()[0]
    staff = Membership.objects.for_org(org).filter(role=Membership.Role.INSTRUCTOR).first()
    if staff is None:
        staff = add_member(org=org, email="staff@bench.example", role=Membership.Role.INSTRUCTOR)
    _, token = create_api_token(membership=staff, name="bench")
    client = Client()
    roster, report = (
        f"/api/learn/courses/{course.id}/enrollments",
        f"/api/learn/courses/{course.id}/report",
    )
    print(f"\n{version}")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start")
    # The baseline of this run: the smallest read of the same stack (the caller's courses,
    # none), so that figures taken on a loaded machine can be read as ratios.
    times, _ = timed(client, "/api/learn/courses", token, {}, args.repeat * 3)
    baseline = statistics.median(times)
    print(f"\nbaseline (GET /api/learn/courses, empty): median {baseline:.1f} ms")
    times, body = timed(client, report, token, {}, args.repeat * 3)
    print(
        f"\nreport: median {statistics.median(times):.1f} ms, p95 {p95(times):.1f} ms "
        f"({body['enrolled']:,} enrolled, {len(body['activities'])} activities)"
    )
    worst: dict[str, tuple[float, str]] = {}
    print(f"\n{'filter':<22} {'sort':<16} {'page':>6} {'total':>7} {'median':>8} {'p95':>8}")
    for label, query in FILTERS.items():
        for field in SORTS:
            for sort in (field, f"-{field}"):
                total = None
                for position in ("first", "middle", "last"):
                    case = f"{label} {sort} {position}"
                    if args.only and args.only not in case:
                        continue
                    page = 1
                    if position != "first":
                        if total is None:
                            total = client.get(
                                roster,
                                {**query, "sort": sort},
                                headers={"Authorization": f"Bearer {token}"},
                            ).json()["total"]
                        pages = max(1, math.ceil(total / 20))
                        page = max(1, pages // 2) if position == "middle" else pages
                    params = {**query, "sort": sort, "page": page}
                    times, body = timed(client, roster, token, params, args.repeat)
                    median = statistics.median(times)
                    if median > worst.get(label, (0.0, ""))[0]:
                        worst[label] = (median, f"{sort} page {page}")
                    print(
                        f"{label:<22} {sort:<16} {page:>6} {body['total']:>7,} "
                        f"{median:>6.1f}ms {p95(times):>6.1f}ms",
                        flush=True,
                    )
    print("\nworst median per filter (and as a multiple of the baseline):")
    for label, (median, case) in worst.items():
        print(f"  {label:<22} {median:6.1f} ms  x{median / baseline:4.1f}  ({case})")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
