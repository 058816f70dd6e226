"""Benchmark of GET /api/organizations/members at 100,000 members on PostgreSQL (not part of
the test suite).

    createdb -h 127.0.0.1 -U postgres lms_members_bench
    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/lms_members_bench
    .venv/bin/python bench/members.py

It migrates the database it is given, loads 100,000 members into one organization (and
10,000 into a neighbour, so that every query must pick its organization's rows out of a
shared table) with ``generate`` below, runs VACUUM ANALYZE as autovacuum would, then times
each case through the whole Django stack in-process (middleware, token lookup, view,
serialization; no socket) and prints the median and p95 of those server times, with the
EXPLAIN ANALYZE of every SQL query the request issued. A later run reuses the loaded members
(pass --reload to load them again). See docs/performance.md for the figures.
"""

from __future__ import annotations

import argparse
import math
import os
import random
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

from bench.bundles import explain, p95, timed  # noqa: E402
from organizations.models import Membership, Organization, User, member_keys  # noqa: E402
from organizations.services import add_member, create_api_token  # noqa: E402

ORG_NAME, NEIGHBOUR_NAME, SMALL_NAME = "Members Bench", "Members Neighbour", "Members Small"
URL = "/api/organizations/members"
FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Tim"]
LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson"]
DOMAINS = ["example.com", "Example.org", "corp.example", "mail.example.net"]
ROLES = [Membership.Role.LEARNER] * 18 + [Membership.Role.INSTRUCTOR, Membership.Role.ADMIN]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=100_000)
    parser.add_argument("--neighbour-members", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=30, help="Timed runs per case.")
    parser.add_argument("--reload", action="store_true", help="Load the members again.")
    parser.add_argument("--no-plans", action="store_true", help="Skip the EXPLAIN output.")
    return parser.parse_args()


def generate(org: Organization, count: int, seed: int) -> None:
    """``count`` members of ``org``, each a new user with a mixed-case address (names and
    domains drawn with ``seed``), in batches of 5,000 rows per insert."""
    draw = random.Random(seed)
    tag = str(org.id)[-8:]  # the random end of the id (its start is the time it was made)
    for start in range(0, count, 5_000):
        users, members = [], []
        for number in range(start, min(start + 5_000, count)):
            first, last = draw.choice(FIRST), draw.choice(LAST)
            email = f"{first}.{last}{number}.{tag}@{draw.choice(DOMAINS)}"
            user = User(email=email, first_name=first, last_name=last, password="!")
            users.append(user)
            email_key, search_key = member_keys(user)
            members.append(
                Membership(
                    org=org,
                    user=user,
                    role=draw.choice(ROLES),
                    email_key=email_key,
                    search_key=search_key,
                )
            )
        with transaction.atomic():
            User.objects.bulk_create(users)
            Membership.objects.bulk_create(members)


def load(name: str, count: int, seed: int, reload: bool) -> Organization:
    org = Organization.objects.filter(name=name).first() or Organization.objects.create(name=name)
    if Membership.objects.for_org(org).count() >= count and not reload:
        print(f"{name}: reusing {count:,} members")
        return org
    User.objects.filter(memberships__org=org).delete()
    started = time.monotonic()
    generate(org, count, seed)
    print(f"{name}: loaded {count:,} members in {time.monotonic() - started:.0f}s")
    return org


def cases(total: int) -> list[tuple[str, dict]]:
    pages = math.ceil(total / 20)
    return [
        ("page 1", {}),
        ("page 2", {"page": 2}),
        (f"middle page ({pages // 2:,} of {pages:,})", {"page": pages // 2}),
        (f"last page ({pages:,})", {"page": pages}),
        ("pageSize 100, middle page", {"pageSize": 100, "page": pages // 10}),
        ("role instructor, page 1", {"role": "instructor"}),
        ("role learner, middle page", {"role": "learner", "page": pages // 2 * 9 // 10}),
        ("search, many rows: 'hopper'", {"search": "hopper"}),
        ("search, many rows, page 50: 'hopper'", {"search": "hopper", "page": 50}),
        ("search, few rows: 'hopper1234'", {"search": "hopper1234"}),
        ("search, no match: 'zzzz'", {"search": "zzzz"}),
        ("search 'ada', role admin", {"search": "ada", "role": "admin"}),
    ]


def main() -> None:
    args = parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Point DATABASE_URL at a PostgreSQL database of its own (it is filled up).")
    logging.getLogger("lms.access").setLevel(logging.WARNING)
    call_command("migrate", verbosity=0)
    org = load(ORG_NAME, args.members, seed=1, reload=args.reload)
    load(NEIGHBOUR_NAME, args.neighbour_members, seed=2, reload=args.reload)
    owner = add_member(org=org, email="owner@members.bench", role=Membership.Role.OWNER)
    _, token = create_api_token(membership=owner, name="bench")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE organizations_membership")
        cursor.execute("VACUUM ANALYZE organizations_user")
        cursor.execute("SELECT version()")
        version = cursor.fetchone()[0]
    client = Client()
    print(f"\n{version}")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start")
    # The baseline, timed before each case: page 1 of an organization of 20 members, the same
    # request where scale costs nothing, so each ratio is what 100,000 members cost.
    small = load(SMALL_NAME, 20, seed=4, reload=False)
    small_owner = add_member(org=small, email="owner@small.bench", role=Membership.Role.OWNER)
    _, small_token = create_api_token(membership=small_owner, name="bench")
    results = []
    print(
        f"\n{'case':<44} {'total':>8} {'rows':>4} {'median':>8} {'p95':>8} "
        f"{'baseline':>8} {'ratio':>5} {'load':>5}"
    )
    for label, query in cases(args.members):
        base, _ = timed(client, small_token, {}, args.repeat, url=URL)
        times, body = timed(client, token, query, args.repeat, url=URL)
        results.append((label, query))
        median = statistics.median(times)
        print(
            f"{label:<44} {body['total']:>8,} {len(body['rows']):>4} "
            f"{median:>6.1f}ms {p95(times):>6.1f}ms {statistics.median(base):>6.1f}ms "
            f"{median / statistics.median(base):>5.1f} {os.getloadavg()[0]:>5.2f}",
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    if args.no_plans:
        return
    print("\nEXPLAIN ANALYZE of each query after the token lookup:")
    for label, query in results:
        print(f"\n== {label}  {query}")
        print("\n".join(explain(client, token, query, url=URL)))


if __name__ == "__main__":
    main()
