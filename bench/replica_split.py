#!/usr/bin/env python
"""Where each operation's statements go with a read replica: per request, the statements
sent to the primary and to the replica, with ``LMS_DATABASE_REPLICA_URL`` set and without
(the baseline, measured in the same run on the same data).

    python bench/replica_split.py                  # after bench/instructions.py prepared the data
    python bench/replica_split.py --set REDIS_URL=redis://127.0.0.1:6379/11

The "replica" is the bench database itself under a second alias (not in recovery, so never
lagging): what is counted is where the router sends each statement, not a standby's speed.
Each operation is warmed up, then ``--requests`` requests are sent to the WSGI application
in-process, as bench/instructions.py sends them (var/bench/manifest.json, its data).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.instructions import FLOOR_KEYS, VAR, call, child_env, operations  # noqa: E402


def measured(args: argparse.Namespace) -> int:
    from django.db import connections
    from django.test.utils import CaptureQueriesContext

    from lms.wsgi import application

    ops = operations(json.loads(Path(args.manifest).read_text()))
    aliases = list(connections)
    result = {}
    for key, requests in ops.items():
        if key in {"link", "unlink", *FLOOR_KEYS} or requests[0][0] != "GET":
            continue
        for i in range(args.warmup):
            call(application, requests[i % len(requests)], "")
        captured = {alias: CaptureQueriesContext(connections[alias]) for alias in aliases}
        for context in captured.values():
            context.__enter__()
        statuses = set()
        for i in range(args.requests):
            statuses.add(call(application, requests[i % len(requests)], ""))
        for context in captured.values():
            context.__exit__(None, None, None)
        result[key] = {
            "statuses": sorted(statuses),
            **{alias: len(captured[alias]) / args.requests for alias in aliases},
        }
    print(json.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL"))
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=16)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--manifest", default=str(VAR / "manifest.json"))
    args = parser.parse_args(argv)
    if args.child:
        return measured(args)

    from bench.load import DEFAULT_DATABASE_URL

    url = args.database_url or DEFAULT_DATABASE_URL
    replica = [f"LMS_DATABASE_REPLICA_URL={url}", "LMS_REPLICA_PIN_SECONDS=5"]
    figures = {}
    for name, extra in (("without", args.set), ("with", [*args.set, *replica])):
        done = subprocess.run(
            [sys.executable, __file__, "--child", "--manifest", args.manifest,
             "--requests", str(args.requests), "--warmup", str(args.warmup)],
            cwd=ROOT, env=child_env(url, "bench.settings", extra), capture_output=True,
            text=True, timeout=600,
        )  # fmt: skip
        if done.returncode:
            sys.exit(f"{name} a replica failed:\n{done.stderr[-4000:]}")
        figures[name] = json.loads(done.stdout.splitlines()[-1])
    print("| operation | statements a request, no replica | with: primary | replica |")
    print("|---|---:|---:|---:|")
    for key, without in figures["without"].items():
        with_ = figures["with"][key]
        print(
            f"| {key} | {without['default']:.2f} | {with_['default']:.2f} "
            f"| {with_.get('replica', 0):.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
