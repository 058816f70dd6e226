#!/usr/bin/env python
"""Load figures for the seven operations, beside the ceiling of the stack.

    python bench/load.py                      # or: make bench
    python bench/load.py --duration 5 --connections 8 --only ceiling,bundles

What it does, every run:

1. Prepares a dedicated PostgreSQL database (default ``lms_bench``; created if missing):
   ``migrate``, ``createcachetable``, ``seed_demo --json`` (fresh demo tokens and ids).
2. Starts the production server, ``gunicorn -c gunicorn.conf.py`` (its worker, thread and
   keep-alive settings as they are; LMS_WORKERS / LMS_THREADS override them as in
   production) on a free port of 127.0.0.1, with ``bench.settings``: the service's settings
   plus /bench/ceiling, a bare Django view answering a constant JSON body.
3. For each target, one after the other: a 1 s warm-up, then ``--connections`` client
   processes, each with one keep-alive HTTP/1.1 connection, send requests back to back for
   ``--duration`` seconds. Only 127.0.0.1 is ever a target; every client stops at the
   deadline or after ``--max-requests``, whichever comes first.
4. Prints requests per second, p50 and p99 latency, and errors (any status other than the
   operation's success statuses, or a failed connection) per target, and writes the figures
   with the machine's description to bench/results/load-<time>.json.
5. Stops the server, whatever happened.

The two writes that change state are measured in cycles that put the state back: a timed
link is followed by an untimed unlink of the same asset, and a timed unlink by an untimed
link, each client on its own (download, asset) pair. So the server answers twice the
requests per second shown for those two rows.

The invite lookup is throttled per client address (60 a minute by default) and every bench
request comes from 127.0.0.1, so the bench raises LMS_INVITE_LOOKUP_RATE for its server
(``--invite-rate``). The throttle itself still runs: each lookup still reads and writes its
counter in the shared cache.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"  # the only address the load client ever sends to
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/lms_bench"
# Stands in for an id the demo manifest does not have yet (that operation answers 404).
MISSING_ID = "00000000-0000-7000-8000-000000000000"


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    body: bytes | None = None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Step:
    call: Call
    timed: bool = True


@dataclass
class Target:
    key: str  # for --only
    name: str  # what the table shows
    ok: frozenset[int]
    # One plan per distinct client; client i cycles through plans[i % len(plans)].
    plans: list[list[Step]]
    # Clients that would share a plan would contend for one state (e.g. one link).
    exclusive: bool = False


@dataclass
class ClientResult:
    latencies_ms: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    errors: int = 0
    reset_errors: int = 0
    reconnects: int = 0
    failures: Counter = field(default_factory=Counter)
    cpu_s: float = 0.0  # CPU time the client itself used


# --- the client ----------------------------------------------------------------------------


class Disconnected(ConnectionError):
    """The server closed the connection before answering."""


class KeepAliveConnection:
    """A minimal HTTP/1.1 client on one keep-alive socket: requests are encoded once, and a
    response is read by its Content-Length (or chunks), so the client spends as little of
    the machine's CPU as it can (http.client parses every header through email.parser)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock: socket.socket | None = None
        self.buffer = b""

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
        self.sock, self.buffer = None, b""

    def _recv(self) -> bytes:
        assert self.sock is not None
        chunk = self.sock.recv(65536)
        if not chunk:
            raise Disconnected("connection closed by the server")
        return chunk

    def send(self, raw: bytes) -> int:
        """Sends one encoded request; returns the response status once the body is read."""
        if self.sock is None:
            self.sock = socket.create_connection((HOST, self.port), timeout=10)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.sendall(raw)
        data = self.buffer
        while (end := data.find(b"\r\n\r\n")) < 0:
            data += self._recv()
        head, data = data[:end].lower(), data[end + 4 :]
        status = int(head[9:12])
        marker = head.find(b"\r\ncontent-length:")
        if marker >= 0:
            stop = head.find(b"\r\n", marker + 2)
            length = int(head[marker + 17 : stop if stop >= 0 else None])
            while len(data) < length:
                data += self._recv()
            self.buffer = data[length:]
        elif b"\r\ntransfer-encoding: chunked" in head:
            while True:
                while (eol := data.find(b"\r\n")) < 0:
                    data += self._recv()
                size = int(data[:eol].split(b";")[0], 16)
                while len(data) < eol + 2 + size + 2:
                    data += self._recv()
                data = data[eol + 2 + size + 2 :]
                if size == 0:
                    break
            self.buffer = data
        else:
            self.buffer = b""
        if b"\r\nconnection: close" in head:
            self.close()
        return status


def encode(call: Call, port: int) -> bytes:
    lines = [f"{call.method} {call.path} HTTP/1.1", f"Host: {HOST}:{port}"]
    lines += [f"{name}: {value}" for name, value in call.headers]
    lines.append(f"Content-Length: {len(call.body or b'')}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (call.body or b"")


def client(
    port: int,
    steps: list[Step],
    ok: frozenset[int],
    start_at: float,
    deadline: float,
    max_requests: int,
    results: multiprocessing.Queue,
) -> None:
    """One keep-alive connection, requests back to back from start_at until the deadline."""
    result = ClientResult()
    conn = KeepAliveConnection(port)
    plan = [(encode(step.call, port), step.timed) for step in steps]
    sent = 0
    delay = start_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    cpu_started = time.process_time()
    try:
        while sent < max_requests and time.monotonic() < deadline:
            for raw, timed in plan:
                started = time.perf_counter()
                status = 0
                for attempt in (1, 2):
                    reused = conn.sock is not None
                    try:
                        status = conn.send(raw)
                        break
                    except (Disconnected, BrokenPipeError, ConnectionResetError):
                        conn.close()
                        # The server closed an idle keep-alive connection (keep-alive timeout,
                        # a worker recycled after max_requests): reconnect and send again, as
                        # HTTP clients do. Anything else, or a second failure, is an error.
                        if attempt == 2 or not reused:
                            result.failures["disconnected"] += 1
                            break
                        result.reconnects += 1
                        started = time.perf_counter()
                    except (OSError, ValueError) as exc:
                        conn.close()
                        result.failures[type(exc).__name__] += 1
                        break
                elapsed_ms = (time.perf_counter() - started) * 1000
                sent += 1
                if timed:
                    result.latencies_ms.append(elapsed_ms)
                    result.statuses[status] += 1
                    if status not in ok:
                        result.errors += 1
                elif status not in ok:
                    result.reset_errors += 1
    finally:
        conn.close()
        result.cpu_s = time.process_time() - cpu_started
        results.put(result)


def run_target(port: int, target: Target, *, connections: int, duration: float, max_requests: int):
    """Runs the clients of one target; returns (merged ClientResult, elapsed seconds, clients)."""
    clients = min(connections, len(target.plans)) if target.exclusive else connections
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    start_at = time.monotonic() + 0.3  # lets every process be ready before the clock starts
    deadline = start_at + duration
    processes = [
        ctx.Process(
            target=client,
            args=(
                port,
                target.plans[i % len(target.plans)],
                target.ok,
                start_at,
                deadline,
                max_requests,
                queue,
            ),
            daemon=True,
        )
        for i in range(clients)
    ]
    for process in processes:
        process.start()
    merged = ClientResult()
    for _ in processes:
        part: ClientResult = queue.get(timeout=duration + 60)
        merged.latencies_ms.extend(part.latencies_ms)
        merged.statuses.update(part.statuses)
        merged.errors += part.errors
        merged.reset_errors += part.reset_errors
        merged.reconnects += part.reconnects
        merged.failures.update(part.failures)
        merged.cpu_s += part.cpu_s
    elapsed = max(time.monotonic(), deadline) - start_at
    for process in processes:
        process.join(timeout=15)
        if process.is_alive():
            process.kill()
    merged.errors += sum(merged.failures.values())
    return merged, elapsed, clients


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return float("nan")
    index = max(0, min(len(sorted_values) - 1, int(fraction * len(sorted_values) + 0.999999) - 1))
    return sorted_values[index]


# --- what to send ---------------------------------------------------------------------------


def _json_call(method: str, path: str, token: str | None, body: Any = None) -> Call:
    headers = [("Accept", "application/json")]
    if token:
        headers.append(("Authorization", f"Bearer {token}"))
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers.append(("Content-Type", "application/json"))
    return Call(method, path, data, tuple(headers))


REPORT_FOR_RULE = {
    "view": {"type": "time", "seconds": 1},
    "time": {"type": "time", "seconds": 1},
    "media": {"type": "media", "from": 0, "to": 5, "duration": 600},
    "pages": {"type": "page", "page": 1, "pages": 10},
    "score": {"type": "score", "score": 3, "maxScore": 10},
    "reported": {"type": "time", "seconds": 1},
}


def build_targets(manifest: dict[str, Any]) -> list[Target]:
    """The ceiling and the seven operations, with ids and tokens of both demo organizations
    (ids the manifest does not have yet are replaced by one that answers 404)."""
    orgs = [manifest[key] for key in ("org", "otherOrg") if manifest.get(key)]

    def tokens(org: dict, role: str) -> str:
        return org.get("tokens", {}).get(role, "")

    def ids(org: dict, key: str) -> list[str]:
        return list(org.get(key) or []) or [MISSING_ID]

    def first_course(org: dict) -> dict:
        return (org.get("courses") or [{}])[0]

    links = []  # (owner token, download, asset): every pair a client can own
    for org in orgs:
        for download in ids(org, "downloads"):
            for asset in ids(org, "assets"):
                links.append((tokens(org, "owner"), download, asset))

    def link(token: str, download: str, asset: str) -> Call:
        return _json_call("POST", f"/api/downloads/{download}/assets", token, {"assetId": asset})

    def unlink(token: str, download: str, asset: str) -> Call:
        return _json_call("DELETE", f"/api/downloads/{download}/assets/{asset}", token)

    progress = []
    for org in orgs:
        rules = first_course(org).get("rules") or {"view": MISSING_ID}
        for rule, activity in rules.items():
            body = {"activity": activity, "reports": [REPORT_FOR_RULE.get(rule, {"type": "x"})]}
            call = _json_call("POST", "/api/learn/progress", tokens(org, "learner"), body)
            progress.append([Step(call)])

    def per_org(make) -> list[list[Step]]:
        return [[Step(make(org))] for org in orgs]

    return [
        Target(
            "ceiling",
            "ceiling: GET /bench/ceiling (bare Django view)",
            frozenset({200}),
            [[Step(_json_call("GET", "/bench/ceiling", None))]],
        ),
        Target(
            "link",
            "4.1 POST /api/downloads/{id}/assets",
            frozenset({200, 201}),
            [[Step(link(*pair)), Step(unlink(*pair), timed=False)] for pair in links],
            exclusive=True,
        ),
        Target(
            "unlink",
            "4.2 DELETE /api/downloads/{id}/assets/{assetId}",
            frozenset({200, 201}),
            [[Step(link(*pair), timed=False), Step(unlink(*pair))] for pair in links],
            exclusive=True,
        ),
        Target("progress", "4.3 POST /api/learn/progress", frozenset({200}), progress),
        Target(
            "activities",
            "4.4 GET /api/learn/courses/{id}/activities",
            frozenset({200}),
            per_org(
                lambda org: _json_call(
                    "GET",
                    f"/api/learn/courses/{first_course(org).get('id', MISSING_ID)}/activities",
                    tokens(org, "learner"),
                )
            ),
        ),
        Target(
            "bundles",
            "4.5 GET /api/bundles",
            frozenset({200}),
            per_org(lambda org: _json_call("GET", "/api/bundles", tokens(org, "learner"))),
        ),
        Target(
            "invite",
            "4.6 GET /api/organizations/invites/{token}",
            frozenset({200}),
            per_org(
                lambda org: _json_call(
                    "GET",
                    "/api/organizations/invites/"
                    + ((org.get("invites") or {}).get("pending") or "no-such-invite"),
                    None,
                )
            ),
        ),
        Target(
            "automation",
            "4.7 GET /api/automations/{id}",
            frozenset({200}),
            per_org(
                lambda org: _json_call(
                    "GET", f"/api/automations/{ids(org, 'automations')[0]}", tokens(org, "owner")
                )
            ),
        ),
    ]


# --- the server and its database -------------------------------------------------------------


def server_env(database_url: str, args: argparse.Namespace) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("LMS_") or key in {"LMS_WORKERS", "LMS_THREADS"}
    }
    env.pop("REDIS_URL", None)
    env.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="bench.settings",
        LMS_INVITE_LOOKUP_RATE=args.invite_rate,
        LMS_LOG_LEVEL=args.log_level,
        LMS_VAR_DIR=str(ROOT / "var" / "bench"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


def ensure_database(database_url: str) -> None:
    import psycopg
    from psycopg import sql

    parts = urlsplit(database_url)
    name = parts.path.lstrip("/")
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            print(f"creating database {name}", file=sys.stderr)
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "lms.settings"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    if result.returncode != 0:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def gunicorn(env: dict[str, str], port: int, log_path: Path):
    log_path.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**env, "LMS_BIND": f"{HOST}:{port}"},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                sys.exit(f"gunicorn exited with {proc.returncode}; see {log_path}")
            with contextlib.suppress(OSError):
                conn = KeepAliveConnection(port)
                try:
                    status = conn.send(encode(Call("GET", "/readyz"), port))
                finally:
                    conn.close()
                if status == 200:
                    break
            if time.monotonic() > deadline:
                sys.exit(f"gunicorn did not become ready in 60 s; see {log_path}")
            time.sleep(0.2)
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=35)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


def gunicorn_settings(env: dict[str, str]) -> dict[str, Any]:
    """What gunicorn.conf.py resolves to under env (workers, threads, keep-alive, ...)."""
    code = (
        "import json, runpy; c = runpy.run_path('gunicorn.conf.py'); "
        "print(json.dumps({k: c[k] for k in ('workers', 'threads', 'worker_class', "
        "'keepalive', 'max_requests', 'timeout')}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def machine() -> dict[str, Any]:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = ""
    with contextlib.suppress(OSError, IndexError, ValueError):
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f"{kib / 1024 / 1024:.0f} GiB"
    return {
        "cpus": os.cpu_count(),
        "cpu": cpu,
        "memory": memory,
        "os": platform.platform(),
        "python": platform.python_version(),
    }


# --- the run ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL"))
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per target")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds before each target")
    parser.add_argument("--connections", type=int, default=16, help="concurrent clients")
    parser.add_argument("--max-requests", type=int, default=1_000_000, help="per client")
    parser.add_argument("--only", default="", help="comma-separated target keys")
    parser.add_argument("--invite-rate", default="100000000/min")
    parser.add_argument("--log-level", default="info", help="the server's (production: info)")
    parser.add_argument("--skip-setup", action="store_true", help="reuse the seeded database")
    args = parser.parse_args(argv)
    if not (0 < args.duration <= 120 and 0 < args.connections <= 64):
        parser.error("--duration must be in (0, 120] and --connections in (0, 64]")

    database_url = args.database_url or DEFAULT_DATABASE_URL
    if not database_url.startswith(("postgres://", "postgresql://")):
        parser.error("the bench runs on PostgreSQL (a postgres:// URL)")
    env = server_env(database_url, args)

    if not args.skip_setup:
        ensure_database(database_url)
        print("preparing the database: migrate, createcachetable, seed_demo", file=sys.stderr)
        manage(env, "migrate", "--noinput")
        manage(env, "createcachetable")
    # Fresh tokens on every run (seed_demo revokes the previous run's).
    manifest = json.loads(manage(env, "seed_demo", "--json"))

    targets = build_targets(manifest)
    if args.only:
        wanted = {key.strip() for key in args.only.split(",") if key.strip()}
        unknown = wanted - {target.key for target in targets}
        if unknown:
            parser.error(f"unknown targets {sorted(unknown)}; known: {[t.key for t in targets]}")
        targets = [target for target in targets if target.key in wanted]
    if len(targets) > 1 and targets[0].key == "ceiling":
        # Measured first and last, so the table shows how steady the machine was meanwhile.
        targets.append(targets[0])

    server = gunicorn_settings(env)
    port = free_port()
    started = datetime.now(UTC)
    log_path = ROOT / "var" / "bench" / "gunicorn.log"
    print(
        f"gunicorn: {server['workers']} workers x {server['threads']} threads "
        f"({server['worker_class']}), keep-alive {server['keepalive']} s; "
        f"{args.connections} connections, {args.duration:g} s per target; log: {log_path}",
        file=sys.stderr,
    )
    rows = []
    with gunicorn(env, port, log_path):
        for target in targets:
            if args.warmup > 0:
                run_target(
                    port, target, connections=args.connections, duration=args.warmup,
                    max_requests=args.max_requests,
                )  # fmt: skip
            result, elapsed, clients = run_target(
                port,
                target,
                connections=args.connections,
                duration=args.duration,
                max_requests=args.max_requests,
            )
            latencies = sorted(result.latencies_ms)
            row = {
                "key": target.key,
                "operation": target.name,
                "clients": clients,
                "requests": len(latencies),
                "rps": len(latencies) / elapsed,
                "p50_ms": percentile(latencies, 0.50),
                "p99_ms": percentile(latencies, 0.99),
                "errors": result.errors,
                "statuses": {str(k): v for k, v in sorted(result.statuses.items())},
                "reset_errors": result.reset_errors,
                "reconnects": result.reconnects,
                "failures": dict(result.failures),
                # Share of the machine's CPU the load client took from the server.
                "client_cpu_share": result.cpu_s / (elapsed * (os.cpu_count() or 1)),
            }
            rows.append(row)
            print(format_row(row), file=sys.stderr)

    ceilings = [row["rps"] for row in rows if row["key"] == "ceiling"]
    ceiling = sum(ceilings) / len(ceilings) if ceilings else None
    print()
    print(format_table(rows, ceiling))
    report = {
        "started": started.isoformat().replace("+00:00", "Z"),
        "machine": machine(),
        "server": server,
        "settings": {
            "connections": args.connections,
            "duration_s": args.duration,
            "warmup_s": args.warmup,
            "invite_lookup_rate": args.invite_rate,
            "log_level": args.log_level,
        },
        "ceiling_rps": ceiling,
        "rows": rows,
    }
    out_dir = ROOT / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"load-{started:%Y%m%dT%H%M%SZ}.json"
    out.write_text(json.dumps(report, indent=2))
    print(f"\nfigures written to {out.relative_to(ROOT)}", file=sys.stderr)
    return 0


def format_row(row: dict[str, Any]) -> str:
    statuses = " ".join(f"{code}x{count}" for code, count in row["statuses"].items())
    return (
        f"  {row['operation']}: {row['rps']:.0f} req/s, p50 {row['p50_ms']:.1f} ms, "
        f"p99 {row['p99_ms']:.1f} ms, {row['errors']} errors [{statuses}], "
        f"client CPU {row['client_cpu_share']:.0%}"
    )


def format_table(rows: list[dict[str, Any]], ceiling: float | None) -> str:
    header = (
        f"| {'operation':<48} | {'req/s':>7} | {'p50 ms':>7} | {'p99 ms':>7} | "
        f"{'errors':>7} | {'of ceiling':>10} |"
    )
    lines = [header, "|" + "|".join("-" * (len(cell)) for cell in header.split("|")[1:-1]) + "|"]
    for row in rows:
        share = f"{row['rps'] / ceiling:.0%}" if ceiling else "-"
        lines.append(
            f"| {row['operation']:<48} | {row['rps']:>7.0f} | {row['p50_ms']:>7.1f} | "
            f"{row['p99_ms']:>7.1f} | {row['errors']:>7} | {share:>10} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
