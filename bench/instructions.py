#!/usr/bin/env python
"""Instructions per request for each operation, ours and the textbook's, and the database's
own time per request: a cost measure that does not move with the neighbours.

    python bench/instructions.py                  # both servers' settings, every operation
    python bench/instructions.py --only automation,bundles --requests 10

For each of ours (bench.settings) and the textbook (bench.textbook_settings) a Python process
runs under ``valgrind --tool=callgrind`` (Debian's valgrind and its callgrind.h; a four-line
C helper is compiled with ``cc`` into var/bench/). It sets Django up, seeds nothing, warms
each operation up, then calls the WSGI application in-process ``--requests`` times per
operation between a zero and a dump of callgrind's counters (client requests), so each dump
holds exactly those requests. PostgreSQL is another process: not counted. A bearer token is
remembered per process (1 s in production, thousands of requests under load), so the count
is taken with ``LMS_TOKEN_CACHE_SECONDS=3600``: a steady state, where a lookup is rare.

Then, without valgrind, each operation's queries of one request are captured and each is run
again under ``EXPLAIN (ANALYZE)`` (in a transaction rolled back): planning plus execution
time, summed per request, median of ``--explain-runs``. That time is the statements' as the
ORM would send them, planned each time: a prepared statement's saving does not show there.
So the database's CPU time per request is counted too, as the requests send their
statements: the nanoseconds the PostgreSQL backend serving the connection spent on a CPU
around each of ``--cpu-requests`` requests (``/proc/PID/schedstat``, read from outside that
process; "-" where PostgreSQL runs on another machine).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import io
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VAR = ROOT / "var" / "bench"
HELPER_C = r"""
#include <valgrind/callgrind.h>
void bench_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void bench_zero(void) { CALLGRIND_ZERO_STATS; }
void bench_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
"""
SERVERS = {
    "ours": ("bench.settings", ""),
    "textbook": ("bench.textbook_settings", "/textbook"),
    "bare": ("bench.bare_settings", ""),
}


def helper() -> Path:
    VAR.mkdir(parents=True, exist_ok=True)
    source, library = VAR / "callgrind_helper.c", VAR / "callgrind_helper.so"
    if not library.exists() or source.read_text() != HELPER_C:
        source.write_text(HELPER_C)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", library, source], check=True)
    return library


# bench/load.py's FLOORS: served by the bare server only.
FLOOR_KEYS = frozenset({"ceiling", "floor", "write"})


# --- in the measured process ------------------------------------------------------------------


def operations(manifest: dict) -> dict[str, list[tuple[str, str, str, dict | None]]]:
    """Each operation's requests, from bench/load.py's targets: key -> list of requests."""
    from bench.load import FLOORS, build_targets

    found = {}
    for target in [*build_targets(manifest), *FLOORS]:
        if target.key == "learners":  # first reports of new learners: not a steady state
            continue
        if target.key == "cycle":
            pairs = target.plans[:10]
            found["link"] = [plan[0] for plan in pairs]
            found["unlink"] = [plan[1] for plan in pairs]
        else:
            found[target.key] = [plan[0] for plan in target.plans]
    return found


# Clients, as bench/wrk.lua's connections are: each request comes from the next address
# (X-Forwarded-For, believed with LMS_NUM_PROXIES=1), so the invite throttle's windows hold
# what they hold under load, not every request of the run under one address.
CLIENTS = 16
_sent = itertools.count()


def call(application, request, prefix: str) -> int:
    method, path, token, body = request
    path, _, query = (prefix + path).partition("?")
    data = json.dumps(body).encode() if body is not None else b""
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_X_FORWARDED_FOR": f"10.0.0.{next(_sent) % CLIENTS}",
        "HTTP_HOST": "127.0.0.1:8000",
        "HTTP_ACCEPT": "application/json",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(data),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }
    if token:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    if data:
        environ["CONTENT_TYPE"] = "application/json"
        environ["CONTENT_LENGTH"] = str(len(data))
    status = []
    result = application(environ, lambda s, h, exc_info=None: status.append(s))
    try:
        b"".join(result)
    finally:
        if hasattr(result, "close"):
            result.close()
    return int(status[0][:3])


def measured(args: argparse.Namespace) -> int:
    """Runs under callgrind: one dump per operation."""
    # The application gunicorn serves (gunicorn.conf.py's wsgi_app), for every server.
    from lms.wsgi import application

    lib = ctypes.CDLL(args.helper)
    manifest = json.loads(Path(args.manifest).read_text())
    prefix = SERVERS[args.server][1]
    ops = operations(manifest)
    wanted = [
        key
        for key in ops
        if (key in FLOOR_KEYS) == (args.server == "bare")
        and (not args.only or key in args.only.split(","))
    ]
    if "link" in wanted or "unlink" in wanted:  # the cycle's pairs start unlinked
        for request in ops["unlink"]:
            call(application, request, prefix)
    lib.bench_start()
    for key in wanted:
        requests = ops[key]
        if key not in {"link", "unlink"}:
            for i in range(max(args.warmup, CLIENTS)):  # every address: its window started
                call(application, requests[i % len(requests)], prefix)
        elif key == "link":  # warm both up on one pair, leave it unlinked
            for _ in range(args.warmup):
                call(application, ops["link"][0], prefix)
                call(application, ops["unlink"][0], prefix)
        count = len(requests) if key in {"link", "unlink"} else args.requests
        statuses = set()
        gc.collect()  # each batch starts from the same heap, whatever ran before it
        lib.bench_zero()
        for i in range(count):
            statuses.add(call(application, requests[i % len(requests)], prefix))
        lib.bench_dump(f"{key} {count}".encode())
        print(json.dumps({"key": key, "count": count, "statuses": sorted(statuses)}), flush=True)
    return 0


# --- the database's time, without valgrind ----------------------------------------------------

_SKIP = re.compile(r"^\s*(SAVEPOINT|RELEASE|ROLLBACK|BEGIN|COMMIT)\b", re.I)


def _cpu_ns(pid: int) -> int | None:
    """The nanoseconds process ``pid`` of this machine has run on a CPU, or None."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def database_cpu(application, key: str, requests: list, undo, prefix: str, n: int) -> float | None:
    """Microseconds of the serving backend's CPU per request of ``key``, over ``n`` requests
    (a write's undoing request, between two, is not counted); None when the backend is not
    on this machine or the connection changed meanwhile."""
    from django.db import connection

    call(application, requests[0], prefix)
    if undo:
        call(application, undo, prefix)
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    spent = 0
    for index in range(n):
        before = _cpu_ns(pid)
        call(application, requests[index % len(requests)], prefix)
        after = _cpu_ns(pid)
        if before is None or after is None:
            return None
        spent += after - before
        if undo:
            call(application, undo, prefix)
    connection.ensure_connection()
    if connection.connection.info.backend_pid != pid:
        return None
    return spent / n / 1000


def database_time(args: argparse.Namespace) -> int:
    """Prints {key: ms of planning + execution per request} for the operations."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from lms.wsgi import application  # as gunicorn serves it

    manifest = json.loads(Path(args.manifest).read_text())
    prefix = SERVERS[args.server][1]
    ops = operations(manifest)
    undo = {"link": "unlink", "unlink": "link"}
    result = {}
    for key, requests in ops.items():
        if (args.only and key not in args.only.split(",")) or key in FLOOR_KEYS:
            continue
        if key == "link":
            call(application, ops["unlink"][0], prefix)
        if key == "unlink":
            call(application, ops["link"][0], prefix)
        for _ in range(3):  # warm: token memory, first-request work
            call(application, requests[0], prefix)
            if key in undo:
                call(application, ops[undo[key]][0], prefix)
        with CaptureQueriesContext(connection) as captured:
            call(application, requests[0], prefix)
        # Read before the next request: request_started resets the connection's query log.
        statements = [q["sql"] for q in captured.captured_queries if not _SKIP.match(q["sql"])]
        if key in undo:  # the state the captured statements found
            call(application, ops[undo[key]][0], prefix)
        runs = []
        for _ in range(args.explain_runs):
            total = 0.0
            for sql in statements:
                try:
                    with transaction.atomic(), connection.cursor() as cursor:
                        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}")
                        plan = cursor.fetchone()[0]
                        plan = plan[0] if isinstance(plan, list) else json.loads(plan)[0]
                        total += plan["Planning Time"] + plan["Execution Time"]
                        transaction.set_rollback(True)
                except Exception as exc:  # a statement that needs the rows it wrote
                    print(f"  {key}: not explained: {exc}"[:200], file=sys.stderr)
            runs.append(total)
        result[key] = {
            "queries": len(statements),
            "db_ms": statistics.median(runs),
            "db_cpu_us": database_cpu(
                application, key, requests, ops[undo[key]][0] if key in undo else None, prefix,
                args.cpu_requests,
            ),
        }  # fmt: skip
        if key == "unlink":
            call(application, ops["unlink"][0], prefix)
    print(json.dumps(result))
    return 0


# --- the driver -------------------------------------------------------------------------------


def child_env(database_url: str, settings: str, extra: list[str] = ()) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LMS_")}
    env.pop("REDIS_URL", None)
    env.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE=settings,
        LMS_TOKEN_CACHE_SECONDS="3600",
        # Unthrottled in effect, with a window a run never outlasts (a hit that starts a
        # window also purges): spread over CLIENTS addresses, a run's few hundred lookups
        # leave each window a few dozen hits, as production's 60 a minute at most would.
        LMS_INVITE_LOOKUP_RATE="100000000/min",
        LMS_NUM_PROXIES="1",
        LMS_LOG_LEVEL="info",
        LMS_VAR_DIR=str(VAR),
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.update(item.split("=", 1) for item in extra)
    return env


def count(server: str, args: argparse.Namespace, manifest: Path, library: Path) -> dict:
    out = VAR / f"callgrind.{server}.{os.getpid()}.out"
    settings = SERVERS[server][0]
    extra = args.set if server == "ours" else []
    command = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
        sys.executable, __file__, "--child", "measure", "--server", server,
        "--manifest", str(manifest), "--helper", str(library), "--requests", str(args.requests),
        "--warmup", str(args.warmup), "--only", args.only,
    ]  # fmt: skip
    result = {}
    env = child_env(args.database_url, settings, extra)
    for line, dump in counted_dumps(command, env, server, out):
        text = dump.read_text()
        if args.keep_dumps:  # for callgrind_annotate --inclusive=yes
            dump.rename(VAR / f"callgrind.{server}.{line['key']}.out")
        else:
            dump.unlink()
        totals = int(re.search(r"^totals:\s+(\d+)", text, re.M).group(1))
        result[line["key"]] = {
            "instructions": totals / line["count"],
            "statuses": line["statuses"],
        }
    Path(out).unlink(missing_ok=True)  # the dump at exit: nothing measured
    return result


def counted_dumps(command: list[str], env: dict, server: str, out: Path) -> list[tuple[dict, Path]]:
    """Runs ``command`` (a process under callgrind writing ``out``, printing a JSON line per
    operation it dumps); each operation's line with its dump."""
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    if done.returncode:
        sys.exit(f"{server} under callgrind failed:\n{done.stderr[-4000:]}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return [(line, Path(f"{out}.{number}")) for number, line in enumerate(lines, start=1)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL"))
    parser.add_argument("--requests", type=int, default=20, help="per read operation")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--explain-runs", type=int, default=5)
    parser.add_argument(
        "--cpu-requests", type=int, default=500, help="per operation, for the database's CPU"
    )
    parser.add_argument("--only", default="")
    parser.add_argument("--servers", default="ours,textbook,bare")
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="for ours (repeat)"
    )
    parser.add_argument("--skip-setup", action="store_true", help="the database is migrated")
    parser.add_argument(
        "--keep-dumps", action="store_true",
        help="keep each operation's callgrind dump as var/bench/callgrind.SERVER.OP.out",
    )  # fmt: skip
    parser.add_argument("--child", choices=["measure", "explain"], help=argparse.SUPPRESS)
    parser.add_argument("--server", help=argparse.SUPPRESS)
    parser.add_argument("--manifest", help=argparse.SUPPRESS)
    parser.add_argument("--helper", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child == "measure":
        return measured(args)
    if args.child == "explain":
        return database_time(args)

    from bench.load import DEFAULT_DATABASE_URL, prepare

    args.database_url = args.database_url or DEFAULT_DATABASE_URL
    manifest = prepare(
        args.database_url, child_env(args.database_url, "bench.settings"), args.skip_setup
    )
    manifest_path = VAR / "manifest.json"
    VAR.mkdir(parents=True, exist_ok=True)
    manifest_path.write_text(json.dumps(manifest))
    library = helper()
    figures = {}
    for server in args.servers.split(","):
        print(f"counting {server} under callgrind ...", file=sys.stderr)
        figures[server] = count(server, args, manifest_path, library)
        if server == "bare":
            continue
        done = subprocess.run(
            [sys.executable, __file__, "--child", "explain", "--server", server,
             "--manifest", str(manifest_path), "--explain-runs", str(args.explain_runs),
             "--cpu-requests", str(args.cpu_requests), "--only", args.only],
            cwd=ROOT, env=child_env(args.database_url, SERVERS[server][0],
                                    args.set if server == "ours" else []),
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if done.returncode:
            sys.exit(f"EXPLAIN of {server} failed:\n{done.stderr[-4000:]}")
        for key, value in json.loads(done.stdout.splitlines()[-1]).items():
            figures[server].setdefault(key, {}).update(value)
    print(format_table(figures))
    out = VAR / "instructions.json"
    out.write_text(json.dumps(figures, indent=2))
    print(f"\nfigures written to {out.relative_to(ROOT)}", file=sys.stderr)
    return 0


def format_table(figures: dict) -> str:
    ours, textbook = figures.get("ours", {}), figures.get("textbook", {})
    lines = [
        "| operation | instructions ours | textbook | ours / textbook | queries ours / textbook "
        "| db ms ours / textbook | db CPU µs ours / textbook | statuses |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for key in [*ours, *(key for key in figures.get("bare", {}) if key not in ours)]:
        if key in figures.get("bare", {}):
            ours = {**ours, key: figures["bare"][key]}
        a, b = ours.get(key, {}), textbook.get(key, {})
        ia, ib = a.get("instructions"), b.get("instructions")
        ratio = f"{ia / ib:.2f}" if ia and ib else "-"
        lines.append(
            f"| {key} | {ia / 1e6 if ia else 0:.2f} M | {ib / 1e6 if ib else 0:.2f} M | {ratio} "
            f"| {a.get('queries', '-')} / {b.get('queries', '-')} "
            f"| {a.get('db_ms', 0):.2f} / {b.get('db_ms', 0):.2f} "
            f"| {_micro(a.get('db_cpu_us'))} / {_micro(b.get('db_cpu_us'))} "
            f"| {a.get('statuses')} / {b.get('statuses')} |"
        )
    return "\n".join(lines)


def _micro(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


if __name__ == "__main__":
    sys.exit(main())
