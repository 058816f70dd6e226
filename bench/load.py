#!/usr/bin/env python
"""Load figures: ours / textbook / floor / ceiling for each operation, from one run.

    python bench/load.py                        # or: make bench
    python bench/load.py --duration 3 --rounds 2 --only automation,bundles

Three servers run at once, each ``gunicorn -c gunicorn.conf.py`` with the same shape
(``--workers`` x ``--threads``; by default gunicorn.conf.py's own, a worker per CPU with one
thread: 2 x 1 on 2 CPUs) on a free loopback port (harness/processes.py):

- ours: the service's settings (bench/settings.py);
- textbook: the DRF textbook baseline of each operation (bench/textbook.py), Django's default
  middleware, ``CONN_MAX_AGE`` and no pool (bench/textbook_settings.py);
- bare: bare Django without middleware (bench/floors.py): the ceiling (a constant page-sized
  JSON body), the floor of a read (the same after two primary-key reads with raw psycopg)
  and the floor of a write (a primary-key read and an INSERT of a JSON row, committed).

``wrk`` (Debian's) loads them in alternation, ``--connections`` connections for
``--duration`` seconds each, round after round (ours, textbook for every operation, then
the ceiling and the floor), and the table gives the medians over the rounds, so a noisy
neighbour hits all alike. The database (``BENCH_DATABASE_URL``, default ``lms_bench``) is
migrated and seeded with the demo set first (``--skip-setup`` skips the migration).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.processes import gunicorn_server  # noqa: E402

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/lms_bench"
WRK_SCRIPT = ROOT / "bench" / "wrk.lua"
REPORT_FOR_RULE = {
    "view": {"type": "time", "seconds": 1},
    "time": {"type": "time", "seconds": 1},
    "media": {"type": "media", "from": 0, "to": 5, "duration": 600},
    "pages": {"type": "page", "page": 1, "pages": 10},
    "score": {"type": "score", "score": 3, "maxScore": 10},
    "reported": {"type": "time", "seconds": 1},
}

# (method, path, bearer token or "", JSON body or None)
Request = tuple[str, str, str, dict | None]


@dataclass
class Target:
    key: str
    name: str
    plans: list[list[Request]]  # connection i runs plans[i % len(plans)] in a cycle
    exclusive: bool = False  # at most one connection per plan
    textbook: bool = True  # also measured against the textbook
    floor: str = "floor"  # the floor it is held to: "floor" (a read's) or "write"


def build_targets(manifest: dict) -> list[Target]:
    orgs = [manifest[key] for key in ("org", "otherOrg") if manifest.get(key)]

    def per_org(make) -> list[list[Request]]:
        return [[make(org)] for org in orgs]

    # The first (download, asset) pair of each organization stays linked (re-link); the
    # others are linked and unlinked in turn, one connection each.
    relinks, cycles = [], []
    for org in orgs:
        owner = org["tokens"]["owner"]
        pairs = [(d, a) for d in org["downloads"] for a in org["assets"]]
        for index, (download, asset) in enumerate(pairs):
            link = ("POST", f"/api/downloads/{download}/assets", owner, {"assetId": asset})
            if index == 0:
                relinks.append([link])
            else:
                unlink = ("DELETE", f"/api/downloads/{download}/assets/{asset}", owner, None)
                cycles.append([link, unlink])
    progress = []
    for org in orgs:
        for rule, activity in org["courses"][0]["rules"].items():
            body = {"activity": activity, "reports": [REPORT_FOR_RULE[rule]]}
            progress.append([("POST", "/api/learn/progress", org["tokens"]["learner"], body)])
    # Each connection its own learner (bench/learners.py), reporting on each activity in
    # turn: reports that do not queue behind one learner's locks.
    spread = []
    for org in orgs:
        rules = list(org["courses"][0]["rules"].items())
        for token in org.get("learners", []):
            spread.append(
                [("POST", "/api/learn/progress", token,
                  {"activity": activity, "reports": [REPORT_FOR_RULE[rule]]})
                 for rule, activity in rules]
            )  # fmt: skip
    search = "/api/bundles?search=python&sort=name&pageSize=100"
    return [
        Target("relink", "4.1 re-link a linked asset", relinks, floor="write"),
        Target("cycle", "4.1 link + 4.2 unlink, in turn", cycles, exclusive=True, floor="write"),
        Target("progress", "4.3 progress, one learner", progress, floor="write"),
        Target("learners", "4.3 progress, a learner per connection", spread, exclusive=True,
               floor="write"),
        Target(
            "activities",
            "4.4 course activities",
            per_org(
                lambda org: (
                    "GET",
                    f"/api/learn/courses/{org['courses'][0]['id']}/activities",
                    org["tokens"]["learner"],
                    None,
                )
            ),
        ),
        Target(
            "courses",
            "8.1 my courses",
            per_org(lambda org: ("GET", "/api/learn/courses", org["tokens"]["learner"], None)),
        ),
        Target(
            "outline",
            "8.2 course outline",
            per_org(
                lambda org: (
                    "GET",
                    f"/api/learn/courses/{org['courses'][0]['id']}",
                    org["tokens"]["learner"],
                    None,
                )
            ),
        ),
        Target(
            "bundles",
            "4.5 bundles, page 1",
            per_org(lambda org: ("GET", "/api/bundles", org["tokens"]["learner"], None)),
        ),
        Target(
            "search",
            "4.5 bundles, search+sort, 100",
            per_org(lambda org: ("GET", search, org["tokens"]["learner"], None)),
        ),
        Target(
            "invite",
            "4.6 read an invite",
            per_org(lambda org: ("GET", f"/api/organizations/invites/{org['invites']['pending']}",
                                 "", None)),
        ),
        Target(
            "automation",
            "4.7 read an automation",
            per_org(lambda org: ("GET", f"/api/automations/{org['automations'][0]}",
                                 org["tokens"]["owner"], None)),
        ),
    ]  # fmt: skip


# The write floor's body: a progress report's.
FLOOR_WRITE_BODY = {
    "activity": "0193b3d6-a4c8-7f1e-9d2b-3c4d5e6f7a8d",
    "reports": [REPORT_FOR_RULE["view"]],
}
FLOORS = [
    Target("ceiling", "ceiling: constant JSON, bare Django",
           [[("GET", "/bench/ceiling", "", None)]], textbook=False, floor="ceiling"),
    Target("floor", "floor: + two raw primary-key reads", [[("GET", "/bench/floor", "", None)]],
           textbook=False),
    Target("write", "write floor: a primary-key read, an INSERT",
           [[("POST", "/bench/write", "", FLOOR_WRITE_BODY)]], textbook=False, floor="write"),
]  # fmt: skip


def write_plans(plans: list[list[Request]], prefix: str, directory: Path) -> Path:
    lines = []
    for plan in plans:
        for method, path, token, body in plan:
            lines.append(f"{method}\t{prefix}{path}\t{token}\t{json.dumps(body) if body else ''}")
        lines.append("--")
    path = Path(tempfile.mkstemp(suffix=".plan", dir=directory)[1])
    path.write_text("\n".join(lines) + "\n")
    return path


def run_wrk(port: int, plan: Path, connections: int, duration: float) -> dict:
    """One bounded wrk run (one thread per connection); its figures."""
    done = subprocess.run(
        ["wrk", f"-t{connections}", f"-c{connections}", f"-d{duration:g}s", "--timeout", "5s",
         "-s", str(WRK_SCRIPT), f"http://127.0.0.1:{port}"],
        env={**os.environ, "WRK_PLAN": str(plan)},
        capture_output=True, text=True, timeout=duration + 60, check=True,
    )  # fmt: skip
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    errors = sum(figures[key] for key in ("connect", "read", "write", "status", "timeout"))
    return {
        "rps": figures["requests"] / (figures["duration_us"] / 1e6),
        "p50_ms": figures["p50_us"] / 1000,
        "p99_ms": figures["p99_us"] / 1000,
        "errors": errors,
    }


def timed_run(
    round_: int, key: str, name: str, port: int, plan: Path, connections: int, duration: float
) -> dict:
    """One run of an alternation (after a 1-s warm-up in the first round), printed; its
    figures."""
    if round_ == 0:
        run_wrk(port, plan, connections, 1)
    result = run_wrk(port, plan, connections, duration)
    time.sleep(0.5)  # what was in flight when wrk stopped ends meanwhile
    print(
        f"  round {round_ + 1} {key:<10} {name:<8} {result['rps']:7.0f} req/s "
        f"p99 {result['p99_ms']:6.1f} ms, {result['errors']} errors",
        file=sys.stderr,
    )
    return result


def share(target: Target, index: int, count: int, connections: int) -> tuple[list, int]:
    """The plans server ``index`` of ``count`` runs for ``target``, and with how many
    connections. An exclusive operation (a write per pair) gives each server its own share
    of the pairs: a write still in flight when one run stops never meets the next run's on
    the same pair."""
    if not target.exclusive:
        return target.plans, connections
    plans = target.plans[index::count]
    return plans, min(connections, len(plans))


def check_bounds(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if not (0 < args.duration <= 60 and 0 < args.connections <= 64 and 0 < args.rounds <= 10):
        parser.error("--duration in (0, 60], --connections in (0, 64], --rounds in (0, 10]")


def server_env(database_url: str, settings: str, args: argparse.Namespace) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LMS_")}
    env.pop("REDIS_URL", None)
    env.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE=settings,
        # Unthrottled in effect, while each address's window holds a second of lookups, as
        # many as production's 60 a minute at most (every connection is its own address).
        LMS_INVITE_LOOKUP_RATE="100000000/s",
        LMS_NUM_PROXIES="1",
        LMS_LOG_LEVEL=args.log_level,
        LMS_VAR_DIR=str(ROOT / "var" / "bench"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    if settings == "bench.settings":
        env.update(item.split("=", 1) for item in args.set)
    return env


def prepare(database_url: str, env: dict[str, str], skip_setup: bool) -> dict:
    import psycopg
    from psycopg import sql

    parts = urlsplit(database_url)
    name = parts.path.lstrip("/")
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    steps = [] if skip_setup else [["migrate", "--noinput"], ["createcachetable"]]
    for step in [*steps, ["seed_demo", "--json"]]:
        done = subprocess.run(
            [sys.executable, "manage.py", *step], cwd=ROOT, capture_output=True, text=True,
            env={**env, "DJANGO_SETTINGS_MODULE": "lms.settings"}, timeout=600,
        )  # fmt: skip
        if done.returncode:
            sys.exit(f"manage.py {' '.join(step)} failed:\n{done.stdout}\n{done.stderr}")
    manifest = json.loads(done.stdout)
    with tempfile.NamedTemporaryFile("w", suffix=".json") as written:
        written.write(json.dumps(manifest))
        written.flush()
        done = subprocess.run(
            [sys.executable, "bench/learners.py", written.name], cwd=ROOT, capture_output=True,
            text=True, env={**env, "DJANGO_SETTINGS_MODULE": "lms.settings"}, timeout=600,
        )  # fmt: skip
    if done.returncode:
        sys.exit(f"bench/learners.py failed:\n{done.stdout}\n{done.stderr}")
    learners = json.loads(done.stdout.strip().splitlines()[-1])
    for key in ("org", "otherOrg"):
        if manifest.get(key):
            manifest[key]["learners"] = learners[manifest[key]["id"]]
    # Every run starts from tables without the dead row versions earlier runs' writes left
    # (the throttle's, the textbook's cache table, the links): a server with autovacuum off
    # would otherwise make each run slower than the one before.
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
    return manifest


def production_shape() -> tuple[int, int]:
    """gunicorn.conf.py's workers and threads when no LMS_ variable sets them, as the servers
    get them (``server_env`` passes none on)."""
    names = [name for name in ("LMS_WORKERS", "LMS_THREADS") if name in os.environ]
    saved = {name: os.environ.pop(name) for name in names}
    try:
        config = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    finally:
        os.environ.update(saved)
    return config["workers"], config["threads"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL"))
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, help="per server (gunicorn.conf.py's default)")
    parser.add_argument("--threads", type=int, help="per worker (gunicorn.conf.py's default)")
    parser.add_argument("--only", default="", help="comma-separated target keys")
    parser.add_argument("--log-level", default="info", help="the servers' (production: info)")
    parser.add_argument("--skip-setup", action="store_true", help="the database is migrated")
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="for ours (repeat)"
    )
    parser.add_argument("--out", help="the figures' JSON file (default: bench/results/)")
    args = parser.parse_args(argv)
    check_bounds(parser, args)
    default_workers, default_threads = production_shape()
    args.workers = args.workers or default_workers
    args.threads = args.threads or default_threads
    database_url = args.database_url or DEFAULT_DATABASE_URL
    envs = {
        name: server_env(database_url, f"bench.{module}", args)
        for name, module in [
            ("ours", "settings"),
            ("textbook", "textbook_settings"),
            ("bare", "bare_settings"),
        ]
    }
    manifest = prepare(database_url, envs["ours"], args.skip_setup)
    targets = build_targets(manifest)
    if args.only:
        wanted = set(args.only.split(","))
        targets = [target for target in targets if target.key in wanted]
    var = ROOT / "var" / "bench"
    var.mkdir(parents=True, exist_ok=True)
    figures: dict[tuple[str, str], list[dict]] = {}
    started = datetime.now(UTC)
    print(
        f"{args.workers} workers x {args.threads} threads per server, {args.connections} "
        f"connections, {args.duration:g} s per run, {args.rounds} rounds",
        file=sys.stderr,
    )
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory(dir=var) as plans_dir:
        servers = {
            name: stack.enter_context(
                gunicorn_server(
                    env, log_path=var / f"{name}.log", workers=args.workers, threads=args.threads
                )
            )
            for name, env in envs.items()
        }
        runs = []  # (target, server name, plan file, connections)
        for target in targets:
            for index, (name, prefix) in enumerate([("ours", ""), ("textbook", "/textbook")]):
                if name == "textbook" and not target.textbook:
                    continue
                plans, connections = share(target, index, 2, args.connections)
                plan = write_plans(plans, prefix, Path(plans_dir))
                runs.append((target, name, plan, connections))
        for target in FLOORS:
            runs.append(
                (target, "bare", write_plans(target.plans, "", Path(plans_dir)), args.connections)
            )
        for round_ in range(args.rounds):
            for target, name, plan, connections in runs:
                result = timed_run(
                    round_, target.key, name, servers[name].port, plan, connections, args.duration
                )
                figures.setdefault((target.key, name), []).append(result)
    rows = summarize(targets, figures)
    print(format_table(rows))
    default = ROOT / "bench" / "results" / f"load-{started:%Y%m%dT%H%M%SZ}.json"
    out = Path(args.out) if args.out else default
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {"started": started.isoformat(), "args": vars(args)}
    out.write_text(json.dumps({**report, "rows": rows, "runs": _runs(figures)}, indent=2))
    print(f"\nfigures written to {out}", file=sys.stderr)
    return 0


def _runs(figures: dict) -> dict:
    return {f"{key}/{name}": values for (key, name), values in figures.items()}


def _median(values: list[dict], field: str) -> float:
    return statistics.median(value[field] for value in values)


def summarize(targets: list[Target], figures: dict) -> list[dict]:
    ceiling = _median(figures[("ceiling", "bare")], "rps")
    floors = {target.key: _median(figures[(target.key, "bare")], "rps") for target in FLOORS}
    rows = []
    for target in [*targets, *FLOORS]:
        name = "bare" if target in FLOORS else "ours"
        ours = figures[(target.key, name)]
        textbook = figures.get((target.key, "textbook"))
        rows.append(
            {
                "key": target.key,
                "operation": target.name,
                "rps": _median(ours, "rps"),
                "textbook_rps": _median(textbook, "rps") if textbook else None,
                # Ratios per round (same moment of the machine), then their median.
                "vs_textbook": statistics.median(
                    a["rps"] / b["rps"] for a, b in zip(ours, textbook, strict=True)
                )
                if textbook
                else None,
                # Against the floor of its kind: a read's, or the write floor.
                "floor": target.floor,
                "of_floor": _median(ours, "rps") / floors[target.floor],
                "of_ceiling": _median(ours, "rps") / ceiling,
                "p99_ms": _median(ours, "p99_ms"),
                "textbook_p99_ms": _median(textbook, "p99_ms") if textbook else None,
                "errors": sum(value["errors"] for value in ours),
                "textbook_errors": sum(value["errors"] for value in textbook) if textbook else 0,
            }
        )
    return rows


def format_table(rows: list[dict]) -> str:
    def ratio(value):
        return "-" if value is None else f"{value:.2f}"

    lines = [
        "| operation | ours req/s | textbook req/s | ours / textbook | of its floor | of ceiling "
        "| p99 ms ours / textbook | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        textbook = "-" if row["textbook_rps"] is None else f"{row['textbook_rps']:.0f}"
        p99 = f"{row['p99_ms']:.1f}"
        if row["textbook_p99_ms"] is not None:
            p99 += f" / {row['textbook_p99_ms']:.1f}"
        lines.append(
            f"| {row['operation']} | {row['rps']:.0f} | {textbook} | {ratio(row['vs_textbook'])} "
            f"| {ratio(row['of_floor'])}{' (write)' if row['floor'] == 'write' else ''} "
            f"| {ratio(row['of_ceiling'])} | {p99} "
            f"| {row['errors']} / {row['textbook_errors']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
