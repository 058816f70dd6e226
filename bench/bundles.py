"""Benchmark of GET /api/bundles at a million rows on PostgreSQL (not part of the test suite).

    createdb -h 127.0.0.1 -U postgres lms_bundles_bench
    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/lms_bundles_bench
    .venv/bin/python bench/bundles.py

It migrates the database it is given, loads 1,000,000 bundles into one organization with
``generate_bundles`` (and 100,000 into a neighbour, so that every query must pick its
organization's rows out of a shared table), runs VACUUM ANALYZE as autovacuum would, then
times each case through the whole Django stack in-process (middleware, token lookup, view,
serialization; no socket) and prints the median and p95 of those server times, with the
EXPLAIN ANALYZE of every SQL query the request issued. A later run reuses the loaded rows
(pass --reload to load them again). See docs/performance.md for the figures.
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
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bundles.models import Bundle  # noqa: E402
from bundles.wire_reads import total_for  # noqa: E402
from organizations.models import Membership, Organization  # noqa: E402
from organizations.services import add_member, create_api_token  # noqa: E402

ORG_NAME, NEIGHBOUR_NAME = "Bench Academy", "Bench Neighbour"
URL = "/api/bundles"
MAX_PAGE = 9007199254740991


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--neighbour-rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30, help="Timed runs per case.")
    parser.add_argument("--reload", action="store_true", help="Load the rows again.")
    parser.add_argument("--no-plans", action="store_true", help="Skip the EXPLAIN output.")
    parser.add_argument("--only", help="Run only the cases whose label contains this.")
    return parser.parse_args()


def load(name: str, rows: int, seed: int, reload: bool) -> Organization:
    org = Organization.objects.filter(name=name).first() or Organization.objects.create(name=name)
    if total_for(org) == rows and not reload:
        print(f"{name}: reusing {rows:,} bundles")
        return org
    Bundle.objects.for_org(org).delete()
    started = time.monotonic()
    call_command(
        "generate_bundles", "--org", str(org.id), "--count", str(rows), "--seed", str(seed)
    )
    print(f"{name}: loaded {rows:,} bundles in {time.monotonic() - started:.0f}s")
    return org


def cases(total: int) -> list[tuple[str, dict]]:
    pages = math.ceil(total / 20)
    return [
        ("page 1, default sort (-createdAt)", {}),
        ("page 2", {"page": 2}),
        (f"middle page ({pages // 2:,} of {pages:,})", {"page": pages // 2}),
        (f"last page ({pages:,})", {"page": pages}),
        ("page past the end (9007199254740991)", {"page": MAX_PAGE}),
        ("pageSize 100, page 1", {"pageSize": 100}),
        (
            "search, few rows: 'fortran crash course (2019'",
            {"search": "fortran crash course (2019"},
        ),
        ("search, few rows: 'cobol masterclass'", {"search": "cobol masterclass"}),
        (
            "search, few rows, page 2: 'cobol masterclass'",
            {"search": "cobol masterclass", "page": 2},
        ),
        ("search, many rows: 'python'", {"search": "python"}),
        ("search, many rows, page 2: 'python'", {"search": "python", "page": 2}),
        ("search, many rows, by name: 'python'", {"search": "python", "sort": "name"}),
        ("search, 1 character: 'a'", {"search": "a"}),
        ("search, no match: 'zzzz'", {"search": "zzzz"}),
        ("sort name", {"sort": "name"}),
        ("sort -name", {"sort": "-name"}),
        ("sort createdAt", {"sort": "createdAt"}),
        ("sort -createdAt", {"sort": "-createdAt"}),
        ("sort updatedAt", {"sort": "updatedAt"}),
        ("sort -updatedAt", {"sort": "-updatedAt"}),
        ("sort name, middle page", {"sort": "name", "page": pages // 2}),
        ("sort -updatedAt, middle page", {"sort": "-updatedAt", "page": pages // 2}),
        ("sort name,-createdAt", {"sort": "name,-createdAt"}),
        ("sort name,-createdAt, page 100", {"sort": "name,-createdAt", "page": 100}),
        ("sort name,-createdAt, middle page", {"sort": "name,-createdAt", "page": pages // 2}),
        ("sort -updatedAt,name, middle page", {"sort": "-updatedAt,name", "page": pages // 2}),
    ]


def timed(
    client: Client, token: str, query: dict, repeat: int, url: str = URL
) -> tuple[list[float], dict]:
    headers = {"Authorization": f"Bearer {token}"}
    for _ in range(3):  # warm the caches and the connection pool
        body = client.get(url, query, headers=headers).json()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url, query, headers=headers)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content[:300]
    return times, body


def p95(times: list[float]) -> float:
    return sorted(times)[max(0, math.ceil(len(times) * 0.95) - 1)]


def explain(client: Client, token: str, query: dict, url: str = URL) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        client.get(url, query, headers={"Authorization": f"Bearer {token}"})
    plans = []
    for entry in captured.captured_queries[1:]:  # the first is the token lookup
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {entry['sql']}")
            lines = [row[0] for row in cursor.fetchall()]
        plans.append(f"    {entry['sql'][:400]}")
        plans += [f"      {line}" for line in lines]
    return plans


def main() -> None:
    args = parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Point DATABASE_URL at a PostgreSQL database of its own (it is filled up).")
    logging.getLogger("lms.access").setLevel(logging.WARNING)
    call_command("migrate", verbosity=0)
    org = load(ORG_NAME, args.rows, seed=1, reload=args.reload)
    load(NEIGHBOUR_NAME, args.neighbour_rows, seed=2, reload=args.reload)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE bundles_bundle")
        cursor.execute("VACUUM ANALYZE bundles_bundletally")
        cursor.execute("SELECT version()")
        version = cursor.fetchone()[0]
    member = add_member(org=org, email="bench@bench.example", role=Membership.Role.LEARNER)
    _, token = create_api_token(membership=member, name="bench")
    client = Client()

    print(f"\n{version}")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start")
    with connection.cursor() as cursor:
        counts = []
        for _ in range(9):
            started = time.perf_counter()
            cursor.execute("SELECT COUNT(*) FROM bundles_bundle WHERE org_id = %s", [org.id])
            counted = cursor.fetchone()[0]
            counts.append((time.perf_counter() - started) * 1000)
        print(
            f"Reference: COUNT(*) of the organization's {counted:,} rows (what the tally "
            f"replaces): median {statistics.median(counts):.1f} ms"
        )
    results = []
    print(f"\n{'case':<52} {'total':>9} {'rows':>4} {'median':>8} {'p95':>8} {'load':>5}")
    for label, query in cases(args.rows):
        if args.only and args.only not in label:
            continue
        times, body = timed(client, token, query, args.repeat)
        results.append((label, query, body, statistics.median(times), p95(times)))
        print(
            f"{label:<52} {body['total']:>9,} {len(body['rows']):>4} "
            f"{statistics.median(times):>6.1f}ms {p95(times):>6.1f}ms {os.getloadavg()[0]:>5.2f}",
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    if args.no_plans:
        return
    print("\nEXPLAIN ANALYZE of each query after the token lookup:")
    for label, query, *_ in results:
        print(f"\n== {label}  {query}")
        print("\n".join(explain(client, token, query)))


if __name__ == "__main__":
    main()
