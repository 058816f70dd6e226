"""Add N bundles with realistic names and creation times spread over five years to an
organization, in batches, for load and scale testing. Progress goes to stderr."""

import time

from django.core.management.base import BaseCommand, CommandError

from bundles.services import generate_bundles
from organizations.api import ORG_HELP, org_option

MAX_COUNT = 10_000_000
MAX_BATCH_SIZE = 50_000
BAR_WIDTH = 30


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("--org", required=True, help=ORG_HELP)
        parser.add_argument(
            "--count", required=True, type=int, help=f"How many bundles (1..{MAX_COUNT:,})."
        )
        parser.add_argument(
            "--batch-size",
            type=int,
            default=5000,
            help=f"Rows per INSERT and per transaction (1..{MAX_BATCH_SIZE:,}; default 5000).",
        )
        parser.add_argument(
            "--seed", type=int, help="Seed of the random names and times (repeatable runs)."
        )

    def handle(self, *args, **options):
        count, batch_size = options["count"], options["batch_size"]
        if not 1 <= count <= MAX_COUNT:
            raise CommandError(f"--count must be between 1 and {MAX_COUNT:,}, not {count}.")
        if not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise CommandError(
                f"--batch-size must be between 1 and {MAX_BATCH_SIZE:,}, not {batch_size}."
            )
        org = org_option(options["org"])

        progress = Progress(self.stderr, count)
        generate_bundles(
            org=org,
            count=count,
            batch_size=batch_size,
            seed=options["seed"],
            on_batch=progress.update,
        )
        progress.finish()
        self.stdout.write(
            f"Added {count:,} bundles to {org.name} ({org.id}) in {progress.elapsed:.1f}s "
            f"({count / max(progress.elapsed, 1e-9):,.0f} rows/s)."
        )


class Progress:
    """A plain-text progress bar. On a terminal it redraws one line; elsewhere (a log file,
    CI) it writes a line at every tenth, so the output stays short."""

    def __init__(self, stream, total: int):
        self.stream, self.total = stream, total
        self.started = time.monotonic()
        self.interactive = stream.isatty()
        self.last_tenth = -1

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def update(self, done: int) -> None:
        tenth = done * 10 // self.total
        if not self.interactive and tenth == self.last_tenth:
            return
        self.last_tenth = tenth
        filled = done * BAR_WIDTH // self.total
        rate = done / max(self.elapsed, 1e-9)
        eta = (self.total - done) / rate if rate else 0
        line = (
            f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done * 100 // self.total:3d}% "
            f"{done:,}/{self.total:,} {rate:,.0f} rows/s ETA {eta:.0f}s"
        )
        if self.interactive:
            self.stream.write(f"\r{line}", ending="")
            self.stream.flush()
        else:
            self.stream.write(line)

    def finish(self) -> None:
        if self.interactive:
            self.stream.write("")
