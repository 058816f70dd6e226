#!/usr/bin/env python
"""Where one operation's time goes: a profile of N in-process requests, by layer and by
function.

    python bench/breakdown.py automation                 # ours
    python bench/breakdown.py search --server textbook --requests 500 --top 30

The requests are bench/load.py's (the demo set, seeded by bench/load.py or
bench/instructions.py into ``BENCH_DATABASE_URL``), called through the WSGI application
in-process as bench/instructions.py calls them. cProfile's own overhead inflates small
calls, so the shares are a guide to where to look; instructions.py gives the firm counts.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.instructions import SERVERS, VAR, call, child_env, operations  # noqa: E402

# Layers, by the path of the file a function is defined in (first match wins).
LAYERS = [
    ("database driver", ("/psycopg/", "/psycopg_pool/")),
    ("ORM", ("/django/db/",)),
    ("DRF", ("/rest_framework/",)),
    ("django-filter", ("/django_filters/",)),
    ("Django forms", ("/django/forms/",)),
    ("Django core", ("/django/",)),
    ("ours", (str(ROOT),)),
    ("logging", ("/logging/",)),
    ("JSON", ("orjson", "/json/")),
]


def layer(filename: str) -> str:
    for name, needles in LAYERS:
        if any(needle in filename for needle in needles):
            return name
    if filename.startswith("~") or filename.startswith("<"):
        return "builtins"
    return "other Python"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("operation", help="a key of bench/load.py's targets: automation, ...")
    parser.add_argument("--server", default="ours", choices=["ours", "textbook", "bare"])
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL"))
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    manifest_path = VAR / "manifest.json"
    if not manifest_path.exists():
        sys.exit("No bench/instructions.py manifest: run bench/instructions.py once first.")
    if not os.environ.get("LMS_CHILD"):  # set the environment the counts use, then re-run
        from bench.load import DEFAULT_DATABASE_URL

        env = child_env(args.database_url or DEFAULT_DATABASE_URL, SERVERS[args.server][0])
        env["LMS_CHILD"] = "1"
        os.execve(sys.executable, [sys.executable, __file__, *sys.argv[1:]], env)

    # The application gunicorn serves (gunicorn.conf.py's wsgi_app), for every server.
    from lms.wsgi import application

    ops = operations(json.loads(manifest_path.read_text()))
    requests = ops[args.operation]
    # A link or an unlink is undone (unprofiled) after each, so every one does its work.
    undo = {"link": ops.get("unlink"), "unlink": ops.get("link")}.get(args.operation)
    prefix = SERVERS[args.server][1]
    if args.operation == "unlink":
        for request in undo:
            call(application, request, prefix)
    profile = cProfile.Profile()
    for i in range(20 + args.requests):
        if i >= 20:
            profile.enable()
        call(application, requests[i % len(requests)], prefix)
        profile.disable()
        if undo:
            call(application, undo[i % len(undo)], prefix)
    if args.operation == "link":
        for request in undo:
            call(application, request, prefix)
    stats = pstats.Stats(profile)
    total = sum(row[2] for row in stats.stats.values())
    by_layer: dict[str, float] = defaultdict(float)
    for (filename, _, _), row in stats.stats.items():
        by_layer[layer(filename)] += row[2]
    print(f"{args.server} {args.operation}: {total / args.requests * 1e3:.3f} ms per request")
    print("own time by layer:")
    for name, spent in sorted(by_layer.items(), key=lambda item: -item[1]):
        print(f"  {name:16} {spent / total:6.1%}")
    stats.sort_stats("cumulative").print_stats(args.top)
    stats.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
