"""The embedded database holds signing secrets and webhook credentials: its file, and the
files SQLite keeps beside it, are readable by their owner only, as var/demo.json is."""

from __future__ import annotations

import stat

import pytest

from tests.organizations.servers import base_env, run_django


@pytest.mark.processes
def test_the_sqlite_database_and_its_wal_are_its_owners_only(tmp_path):
    env = base_env(LMS_VAR_DIR=str(tmp_path), DATABASE_URL="", LMS_LOG_LEVEL="CRITICAL")
    run_django(
        "import os\n"
        "os.umask(0o022)  # the usual one: files readable by everyone unless made otherwise\n"
        "from django.db import connection\n"
        "with connection.cursor() as c:\n"
        "    c.execute('CREATE TABLE t (secret text)')\n"
        "    c.execute(\"INSERT INTO t VALUES ('whsec_x')\")\n",
        env,
    )
    made = sorted(p.name for p in tmp_path.glob("db.sqlite3*"))
    assert "db.sqlite3" in made
    modes = {name: stat.S_IMODE((tmp_path / name).stat().st_mode) for name in made}
    assert set(modes.values()) == {0o600}, modes
