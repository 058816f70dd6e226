#!/usr/bin/env python
"""Our server in several gunicorn shapes (workers x threads), loaded in alternation.

    python bench/shapes.py                                   # 2x4 against 2x1
    python bench/shapes.py --shapes 2x1,2x2,5x4 --only activities,search --rounds 4
    python bench/shapes.py --shapes 2x1,2x1:LMS_DB_PREPARE=false     # a setting, on and off

Each shape is ``gunicorn -c gunicorn.conf.py`` with the service's bench settings
(bench/settings.py) and ``LMS_WORKERS``/``LMS_THREADS`` set, on a free loopback port; all
run at once. A shape may name settings of its own after a colon (``2x1:NAME=VALUE:...``,
environment variables of that server), to weigh a setting against its default. For each
round and operation, wrk (16 connections, ``--duration`` seconds) loads every shape in turn,
the order reversed each round, so a noisy neighbour hits all alike. The table gives each
shape's median requests a second and p99, and its ratio to the first shape taken per round
(the same moment of the machine). The operations are bench/load.py's; so are the database
and its seeding (``--skip-setup`` as there).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.load import (  # noqa: E402
    DEFAULT_DATABASE_URL,
    build_targets,
    check_bounds,
    prepare,
    server_env,
    share,
    timed_run,
    write_plans,
)
from harness.processes import gunicorn_server  # noqa: E402

# bench/load.py's operations, named without a seeded database (its floors run on the bare
# settings, not ours).
OPERATIONS = tuple(target.key for target in build_targets({}))
SHAPE = re.compile(r"^([1-9][0-9]?)x([1-9][0-9]?)((?::[A-Z][A-Z0-9_]*=[^:,]*)*)$")


@dataclass(frozen=True)
class Shape:
    name: str
    workers: int
    threads: int
    settings: tuple[tuple[str, str], ...] = ()


def parse_shapes(text: str) -> list[Shape]:
    shapes = []
    for item in text.split(","):
        match = SHAPE.match(item.strip())
        if not match:
            raise argparse.ArgumentTypeError(
                f"{item!r} is not WORKERSxTHREADS[:NAME=VALUE...] (e.g. 2x4, 2x1:LMS_X=1)"
            )
        settings = tuple(tuple(setting.split("=", 1)) for setting in match[3].split(":") if setting)
        shapes.append(Shape(item.strip(), int(match[1]), int(match[2]), settings))
    names = [shape.name for shape in shapes]
    if len(shapes) < 2 or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError("give two shapes or more, each once")
    return shapes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", type=parse_shapes, default=parse_shapes("2x4,2x1"))
    parser.add_argument("--only", default="activities,search,automation")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--duration", type=float, default=4.0, help="seconds per run")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--skip-setup", action="store_true", help="the database is migrated")
    args = parser.parse_args(argv)
    check_bounds(parser, args)
    wanted = args.only.split(",")
    if unknown := set(wanted) - set(OPERATIONS):
        parser.error(f"unknown operations: {', '.join(sorted(unknown))}; known: {OPERATIONS}")
    database_url = args.database_url or DEFAULT_DATABASE_URL
    env = server_env(database_url, "bench.settings", argparse.Namespace(log_level="info", set=[]))
    manifest = prepare(database_url, env, args.skip_setup)
    targets = [target for target in build_targets(manifest) if target.key in wanted]
    names = [shape.name for shape in args.shapes]
    var = ROOT / "var" / "bench"
    var.mkdir(parents=True, exist_ok=True)
    figures: dict[tuple[str, str], list[dict]] = {}
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory(dir=var) as plans_dir:
        servers = {
            shape.name: stack.enter_context(
                gunicorn_server(
                    {**env, **dict(shape.settings)},
                    log_path=var / f"shape-{index}.log",
                    workers=shape.workers,
                    threads=shape.threads,
                )
            )
            for index, shape in enumerate(args.shapes)
        }
        plans, connections = {}, {}
        for target in targets:
            for index, name in enumerate(names):
                own, connections[(target.key, name)] = share(
                    target, index, len(names), args.connections
                )
                plans[(target.key, name)] = write_plans(own, "", Path(plans_dir))
        for round_ in range(args.rounds):
            order = names if round_ % 2 == 0 else names[::-1]
            for target in targets:
                for name in order:
                    key = (target.key, name)
                    result = timed_run(
                        round_, *key, servers[name].port, plans[key], connections[key],
                        args.duration,
                    )  # fmt: skip
                    figures.setdefault(key, []).append(result)
    print(format_table(targets, names, figures))
    return 0


def format_table(targets: list, names: list[str], figures: dict) -> str:
    first = names[0]
    header = " | ".join(f"{name} req/s, p99 ms, / {first} per round" for name in names[1:])
    lines = [
        f"| operation | {first} req/s, p99 ms | {header} |",
        "|---|---:|" + "---:|" * (len(names) - 1),
    ]
    for target in targets:
        base = figures[(target.key, first)]
        cells = [_cell(base)]
        for name in names[1:]:
            runs = figures[(target.key, name)]
            ratios = " ".join(f"{b['rps'] / a['rps']:.2f}" for a, b in zip(base, runs, strict=True))
            cells.append(f"{_cell(runs)}, {ratios}")
        errors = sum(run["errors"] for name in names for run in figures[(target.key, name)])
        suffix = f" ({errors} errors)" if errors else ""
        lines.append(f"| {target.name}{suffix} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(runs: list[dict]) -> str:
    rps = statistics.median(run["rps"] for run in runs)
    p99 = statistics.median(run["p99_ms"] for run in runs)
    return f"{rps:.0f}, {p99:.1f}"


if __name__ == "__main__":
    sys.exit(main())
