"""Running the service as a real process, the way production does, for the tests of the
deployment (and the others that start the service or a command as production would).

Every helper here keeps the child's environment explicit (no LMS_* or DATABASE_URL leaks in
from the developer's shell) and always stops what it started.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import uuid
from pathlib import Path

from harness.processes import get, gunicorn_server

__all__ = ["get", "gunicorn_server"]

ROOT = Path(__file__).resolve().parents[2]


def clean_env(**overrides: str) -> dict[str, str]:
    """The current environment without our knobs, plus ``overrides``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("LMS_")
        and key not in {"DATABASE_URL", "REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    env["DJANGO_SETTINGS_MODULE"] = "lms.settings"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(overrides)
    return env


def developer_env(var_dir: Path, port: int, **overrides: str) -> dict[str, str]:
    """What `make run` and `make serve` need on a developer's machine, with every file under
    var_dir (SQLite), one small server on ``port`` and a task queue of its own."""
    return clean_env(
        LMS_VAR_DIR=str(var_dir),
        LMS_STATIC_ROOT=str(var_dir / "static"),
        DATABASE_URL=f"sqlite:///{var_dir / 'db.sqlite3'}",
        LMS_BIND=f"127.0.0.1:{port}",
        LMS_WORKERS="1",
        LMS_TASKS_QUEUE=f"lms-test-{uuid.uuid4().hex[:12]}",
        LMS_LOG_LEVEL="WARNING",
        **overrides,
    )


def production_env(var_dir: Path, **overrides: str) -> dict[str, str]:
    """The README's production variables, with every file the process writes under var_dir."""
    return clean_env(
        LMS_HTTPS="true",
        LMS_SECRET_KEY=secrets.token_urlsafe(50),
        LMS_ALLOWED_HOSTS="lms.example.com",
        LMS_VAR_DIR=str(var_dir),
        LMS_STATIC_ROOT=str(var_dir / "static"),
        DATABASE_URL=f"sqlite:///{var_dir / 'db.sqlite3'}",
        **overrides,
    )


def manage(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
