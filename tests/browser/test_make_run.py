"""A second `make run` keeps what the first one's demo was used for: it seeds only a database
without the demo, and on a seeded one it changes nothing and prints the manifest as `make
serve` does. The learner's progress, the printed tokens and the admin password all still work
(a browser signs in with the first run's password); `make seed` is what re-seeds."""

from __future__ import annotations

import json
import urllib.request

import pytest

from harness.processes import free_port, make_target
from tests.deployment.processes import developer_env

pytestmark = pytest.mark.processes


def _call(port: int, method: str, path: str, token: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_a_second_make_run_keeps_progress_tokens_and_passwords(tmp_path, browser):
    port = free_port()
    env = developer_env(tmp_path, port)
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    with make_target("run", env, port=port, log_path=first_log):
        manifest = json.loads((tmp_path / "demo.json").read_text())
        learner = manifest["org"]["tokens"]["learner"]
        course = manifest["org"]["courses"][0]
        viewed = _call(
            port,
            "POST",
            "/api/learn/progress",
            learner,
            {"activity": course["rules"]["view"], "reports": []},
        )
        assert viewed["status"] == "completed"
    assert "Demo data is ready." in first_log.read_text()

    with make_target("run", env, port=port, log_path=second_log):
        output = second_log.read_text()
        assert "Demo data is ready." not in output, output[-3000:]
        assert "The demo is already seeded" in output and learner in output
        assert json.loads((tmp_path / "demo.json").read_text()) == manifest
        progress = _call(port, "GET", f"/api/learn/courses/{course['id']}/progress", learner)
        done = {a["activity"]: a["status"] for a in progress["activities"]}
        assert done[course["rules"]["view"]] == "completed"

        context = browser.new_context(base_url=f"http://127.0.0.1:{port}", locale="en-US")
        try:
            page = context.new_page()
            page.goto("/admin/login/")
            page.fill("input[name=username]", manifest["org"]["staff"]["email"])
            page.fill("input[name=password]", manifest["org"]["staff"]["password"])
            page.click("input[type=submit]")
            page.wait_for_url("**/admin/")
            assert page.locator("#site-name").count() == 1
        finally:
            context.close()
