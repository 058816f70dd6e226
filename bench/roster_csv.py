"""Benchmark of a course roster's CSV download at 100,000 enrolments on PostgreSQL: rows a
second and the serving worker's peak memory (not part of the test suite).

    createdb -h 127.0.0.1 -U postgres lms_csv_bench
    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/lms_csv_bench
    .venv/bin/python bench/roster_csv.py

It migrates the database it is given, loads one course with ``--rows`` enrolments (each
learner's standing as ``learn.standing`` keeps it; a tenth completed; names with commas,
quotes and formula-looking text), then starts the production server with one worker and
downloads the course's roster CSV from the admin (``/admin/learn/course/<id>/report/
enrollments.csv``) over HTTP: a filtered tenth of the rows, then all of them, ``--repeat``
times each. It prints, per download, the rows, the seconds, the rows a second and the
worker's peak resident memory (``VmHWM`` of /proc) after it, beside two baselines measured
in the same run: the worker's peak after serving the report page (50 rows), and
PostgreSQL's own ``COPY ... TO STDOUT (FORMAT csv)`` of the same columns read by this
process (the database's floor for the rows). A later run reuses the loaded rows (pass
--reload to load them again). See docs/performance.md for the figures.
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lms.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from harness.processes import HOST, gunicorn_server  # noqa: E402
from learn.models import Activity, Course, Enrollment, Module, Stage  # noqa: E402
from lms.ids import uuid7  # noqa: E402
from organizations.models import Membership, Organization, User  # noqa: E402

ORG_NAME, COURSE_TITLE = "CSV Bench Academy", "Workplace safety (bench)"
BATCH = 5000
ACTIVITIES = 20


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="Downloads per case.")
    parser.add_argument("--reload", action="store_true", help="Load the rows again.")
    return parser.parse_args()


def load(rows: int) -> Course:
    """The bench's course with ``rows`` enrolments (made once; ``--reload`` remakes it)."""
    org = Organization.objects.filter(name=ORG_NAME).first()
    if org is not None:
        course = Course.objects.for_org(org).get(title=COURSE_TITLE)
        if Enrollment.objects.for_org(org).filter(course=course).count() == rows:
            return course
        org.delete()
    org = Organization.objects.create(name=ORG_NAME)
    course = Course.objects.create(org=org, title=COURSE_TITLE, published=True)
    module = Module.objects.create(org=org, course=course, seq=1, title="All", published=True)
    Activity.objects.bulk_create(
        Activity(org=org, course=course, module=module, seq=n, title=f"Step {n}", published=True)
        for n in range(1, ACTIVITIES + 1)
    )
    now = timezone.now()
    names = ["Ada", "O'Brien, Pat", '"Quoted"', '=HYPERLINK("x")', "Zoë", "Ken"]
    for start in range(0, rows, BATCH):
        numbers = range(start, min(start + BATCH, rows))
        users = [
            User(
                email=f"learner{n}@bench.example",
                first_name=names[n % 6],
                last_name=f"L{n}",
                password="!",
            )
            for n in numbers
        ]
        User.objects.bulk_create(users)
        members = [Membership(id=uuid7(), org=org, user=u, role="learner") for u in users]
        Membership.objects.bulk_create(members)
        enrollments = []
        for n, member in zip(numbers, members, strict=True):
            stage = Stage.COMPLETED if n % 10 == 0 else (Stage.IN_PROGRESS if n % 3 else 0)
            done = ACTIVITIES if stage == Stage.COMPLETED else (n % ACTIVITIES if stage else 0)
            enrollments.append(
                Enrollment(
                    id=uuid7(),
                    org=org,
                    course=course,
                    membership=member,
                    stage=stage,
                    done=done,
                    completed_at=now if stage == Stage.COMPLETED else None,
                    last_activity_at=now if stage else None,
                    due_at=now + timedelta(days=(n % 60) - 30),
                    email_key=member.user.email,
                    search_text=f"{member.user.email}\x1f{names[n % 6].lower()}\x1fl{n}",
                )
            )
        Enrollment.objects.bulk_create(enrollments)
        print(f"  loaded {min(start + BATCH, rows)} enrolments", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return course


def session_cookie() -> str:
    """A superuser's admin session, as a sign-in would leave it."""
    user = User.objects.filter(email="csv-bench@bench.example").first()
    if user is None:
        user = User.objects.create_superuser(email="csv-bench@bench.example", password="x" * 20)
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def download(port: int, path: str, cookie: str) -> tuple[int, float, int]:
    """GET ``path`` read to the end in 64 KiB reads: (data rows, seconds, bytes)."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection(HOST, port, timeout=600)
    try:
        conn.request("GET", path, headers={"Cookie": cookie})
        response = conn.getresponse()
        assert response.status == 200, (response.status, response.read()[:500])
        size = lines = 0
        while chunk := response.read(65536):
            size += len(chunk)
            lines += chunk.count(b"\n")  # no cell here holds a line break
    finally:
        conn.close()
    return lines - 1, time.perf_counter() - started, size


def worker_peak_kib(master_pid: int) -> int:
    """The peak resident memory (VmHWM, KiB) of the master's one worker."""
    children = Path(f"/proc/{master_pid}/task/{master_pid}/children").read_text().split()
    [worker] = children
    for line in Path(f"/proc/{worker}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def copy_floor(course: Course) -> tuple[int, float]:
    """PostgreSQL's own CSV of the roster's columns, read by this process: (rows, seconds)."""
    query = (
        "COPY (SELECT m.id, u.email, u.first_name, u.last_name, e.created_at, e.due_at,"
        " e.stage, e.done, e.completed_at, e.last_activity_at"
        " FROM learn_enrollment e JOIN organizations_membership m ON m.id = e.membership_id"
        " JOIN organizations_user u ON u.id = m.user_id"
        f" WHERE e.org_id = '{course.org_id}' AND e.course_id = '{course.id}'"
        " ORDER BY e.created_at DESC, e.membership_id DESC) TO STDOUT (FORMAT csv)"
    )
    started = time.perf_counter()
    rows = 0
    with connection.cursor() as cursor, cursor.cursor.copy(query) as copy:
        for block in copy:
            rows += bytes(block).count(b"\n")
    return rows, time.perf_counter() - started


def main() -> int:
    args = parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Give DATABASE_URL of a PostgreSQL database.")
    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    course = load(args.rows) if not args.reload else load_again(args.rows)
    cookie = session_cookie()
    connection.close()
    report = f"/admin/learn/course/{course.pk}/report/"
    cases = [("completed only (a tenth)", "?status=completed"), ("every row", "")]
    var = tempfile.mkdtemp()
    env = {**os.environ, "LMS_LOG_LEVEL": "WARNING", "LMS_VAR_DIR": var}
    subprocess.run(  # the admin's pages name the collected static files
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env,
        check=True,
    )  # fmt: skip
    if True:
        with gunicorn_server(env, log_path=Path(var) / "gunicorn.log", workers=1) as server:
            master = server.proc.pid
            started = time.perf_counter()
            conn = http.client.HTTPConnection(HOST, server.port, timeout=600)
            conn.request("GET", report, headers={"Cookie": cookie})
            page = conn.getresponse()
            page.read()
            conn.close()
            assert page.status == 200, page.status
            page_seconds = time.perf_counter() - started
            baseline = worker_peak_kib(master)
            print(f"report page (50 rows): {page_seconds:.2f} s, worker peak {baseline} KiB")
            for label, query in cases:
                timings = []
                for _ in range(args.repeat):
                    rows, seconds, size = download(
                        server.port, f"{report}enrollments.csv{query}", cookie
                    )
                    timings.append(seconds)
                    peak = worker_peak_kib(master)
                    print(
                        f"{label}: {rows} rows, {size / 1e6:.1f} MB in {seconds:.2f} s"
                        f" = {rows / seconds:,.0f} rows/s; worker peak {peak} KiB"
                        f" ({peak / baseline:.2f}x the page's)",
                        flush=True,
                    )
                median = statistics.median(timings)
                print(f"  median {median:.2f} s = {rows / median:,.0f} rows/s")
    copied, seconds = copy_floor(course)
    print(f"PostgreSQL COPY of the same columns: {copied} rows in {seconds:.2f} s"
          f" = {copied / seconds:,.0f} rows/s")  # fmt: skip
    return 0


def load_again(rows: int) -> Course:
    Organization.objects.filter(name=ORG_NAME).delete()
    return load(rows)


if __name__ == "__main__":
    sys.exit(main())
