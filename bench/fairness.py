"""How long a new run waits behind receivers that never answer: two test sends to tarpits,
then a third to a receiver on the loopback that answers at once, with one worker and the
deadline and retry delays as deployed (10 s each). Prints the third run's delay, from its
test send to its delivery, once per task backend asked for.

Runs a deployment in miniature (gunicorn, the worker, the sweep; see
harness/workers.py) on a database of its own: a fresh PostgreSQL database when
DATABASE_URL names a server, else a SQLite file. Redis on 127.0.0.1:6379 for RQ.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/fairness.py \\
        [--backend database --backend rq] [--retry-base 10]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.getcwd())

from harness.hostile import HostileReceiver, silent
from harness.workers import SETUP, Receiver, deployment, wait_for


def third_run_delay(backend: str, retry_base: str) -> float:
    tarpit, receiver = HostileReceiver(silent), Receiver()
    overrides = {
        "LMS_WEBHOOK_DEADLINE_SECONDS": "10",
        "LMS_AUTOMATION_LEASE_SECONDS": "60",
        "LMS_AUTOMATION_RETRY_BASE_SECONDS": retry_base,
    }
    if backend == "rq":
        overrides |= {"backend": "rq", "REDIS_URL": "redis://127.0.0.1:6379/0"}
    try:
        with (
            tempfile.TemporaryDirectory() as tmp,
            deployment(Path(tmp), **overrides) as stack,
        ):
            w = stack.django(SETUP % {"n": f"fairness-{os.getpid()}-{backend}"})

            def automation(url: str) -> str:
                body = {
                    "name": url,
                    "trigger": "activity.completed",
                    "actions": [{"type": "webhook", "input": {"url": url}}],
                }
                status, created = stack.call("POST", "/api/automations", w["owner"], body)
                assert status == 201, created
                return created["id"]

            slow = [automation(f"{tarpit.url}/never/{n}") for n in (1, 2)]
            fast = automation(f"{receiver.url}/ok/third")
            for automation_id in [*slow, fast]:
                status, run = stack.call(
                    "POST", f"/api/automations/{automation_id}/test", w["owner"], {}
                )
                assert status == 202, run
                sent = time.monotonic()
            (delivered,) = wait_for(lambda: receiver.to("/ok/third"), timeout=300, every=0.1)
            return delivered["at"] - sent
    finally:
        tarpit.close()
        receiver.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", action="append", choices=["database", "rq"])
    parser.add_argument("--retry-base", default="10")
    args = parser.parse_args()
    for backend in args.backend or ["database", "rq"]:
        delay = third_run_delay(backend, args.retry_base)
        print(json.dumps({"backend": backend, "retry_base": args.retry_base, "delay_s": delay}))


if __name__ == "__main__":
    main()
