"""Staff's reads of learning (9.4-9.6) on a read replica, for real: a PostgreSQL primary and
its streaming standby (tests/lms/test_read_replica.py's clusters), the production server
with LMS_DATABASE_REPLICA_URL, over HTTP. The completions feed is read from the standby, its
cursor stays right across the standby's lag (a completion not replayed yet is served once
it is, never skipped). A caller that has just written reads the primary, as for every read
(tests/lms/test_read_replica.py)."""

from __future__ import annotations

import json
import time

import pytest

from harness.processes import gunicorn_server
from tests.lms.test_read_replica import (  # noqa: F401 (clusters: a fixture)
    CHECK_SECONDS,
    MAX_LAG_SECONDS,
    PIN_SECONDS,
    call,
    clusters,
)
from tests.organizations.servers import base_env, run_django

pytestmark = pytest.mark.processes

SETUP = """
import json
from django.core.management import call_command
from learn.models import Activity, Course, Module
from learn.services import enroll_members
from organizations.models import Organization
from organizations.services import add_member, create_api_token
call_command("migrate", verbosity=0)
call_command("createcachetable")
org = Organization.objects.create(name="Replica Academy")
course = Course.objects.create(org=org, title="Safety", published=True)
module = Module.objects.create(org=org, course=course, seq=1, title="Basics", published=True)
activity = Activity.objects.create(
    org=org, course=course, module=module, seq=1, title="Read", published=True
)
out = {"course": str(course.id), "activity": str(activity.id), "tokens": {}}
members = []
for name, role in (("integrator", "admin"), ("a", "learner"), ("b", "learner")):
    member = add_member(org=org, email=f"{name}@example.com", role=role)
    members.append(member.id)
    out["tokens"][name] = create_api_token(membership=member)[1]
enroll_members(org_id=org.id, course_id=course.id, membership_ids=members[1:])
print(json.dumps(out))
"""

FEED = "/api/learn/completions"


@pytest.mark.postgres
def test_the_feed_reads_the_standby_and_its_cursor_survives_the_lag(clusters, tmp_path):  # noqa: F811
    clusters.sql(clusters.primary_port, "CREATE DATABASE lms", database="postgres")
    env = base_env(DATABASE_URL=clusters.url(clusters.primary_port), LMS_VAR_DIR=str(tmp_path))
    made = json.loads(run_django(SETUP, env).strip().splitlines()[-1])
    tokens, activity = made["tokens"], made["activity"]
    done = {"activity": activity, "reports": [{"type": "complete"}]}
    clusters.wait_replayed()
    env.update(
        LMS_DATABASE_REPLICA_URL=clusters.url(clusters.standby_port),
        LMS_REPLICA_PIN_SECONDS=str(PIN_SECONDS),
        LMS_REPLICA_MAX_LAG_SECONDS=str(MAX_LAG_SECONDS),
        LMS_REPLICA_CHECK_SECONDS=str(CHECK_SECONDS),
        LMS_REPLICA_DEBUG_HEADER="true",
        LMS_TOKEN_CACHE_SECONDS="0",
    )
    integrator = tokens["integrator"]
    with gunicorn_server(env, log_path=tmp_path / "gunicorn.log", workers=2) as server:
        port = server.port
        assert call(port, "POST", "/api/learn/progress", tokens["a"], done)[0] == 200
        clusters.wait_replayed()
        status, standby, first = call(port, "GET", FEED, integrator)
        assert (status, standby, len(first["rows"])) == (200, "true", 1)

        # With the standby's replay paused, b's completion is on the primary only: the feed,
        # read from the standby, has nothing new and answers the cursor sent.
        clusters.sql(clusters.primary_port, "CREATE TABLE replayed_just_now (id int)")
        clusters.wait_replayed()
        clusters.sql(clusters.standby_port, "SELECT pg_wal_replay_pause()")
        paused_at = time.monotonic()
        assert call(port, "POST", "/api/learn/progress", tokens["b"], done)[0] == 200
        status, standby, polled = call(port, "GET", f"{FEED}?after={first['next']}", integrator)
        assert (status, standby, polled) == (200, "true", {"rows": [], "next": first["next"]})
        course = f"{FEED}?courseId={made['course']}&after={first['next']}"
        assert call(port, "GET", course, integrator)[:2] == (200, "true")
        assert time.monotonic() - paused_at < MAX_LAG_SECONDS

        # Replayed, it is served after the cursor: late, never skipped.
        clusters.sql(clusters.standby_port, "SELECT pg_wal_replay_resume()")
        clusters.wait_replayed()
        time.sleep(2 * CHECK_SECONDS)
        status, standby, caught_up = call(port, "GET", f"{FEED}?after={first['next']}", integrator)
        assert (status, standby, [row["email"] for row in caught_up["rows"]]) == (
            200,
            "true",
            ["b@example.com"],
        )
