"""8.6 in a real browser: a page served on another loopback origin calls the API, started as
production starts it (gunicorn, harness/processes.py), with a learner's bearer token, and reads
the answer, because that origin is in LMS_CORS_ORIGINS. The same page on an origin that is
not listed cannot: Chromium refuses the answer (the fetch fails)."""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness.processes import gunicorn_server
from tests.deployment.processes import clean_env, manage

pytestmark = pytest.mark.processes

# What the page reads: one constant, the only place that names the endpoint.
ENDPOINT = "/api/learn/courses"
# The pages' origins: another loopback address than the API's 127.0.0.1, so another origin
# (and another site) to the browser, whatever the ports.
PAGE_HOST = "127.0.0.2"

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Front end</title></head>
<body><pre id="out">waiting</pre>
<script>
const out = document.getElementById("out");
fetch(__API__, {headers: {"Authorization": "Bearer " + __TOKEN__, "Accept": "application/json"}})
  .then(async (response) => {
    const body = await response.json();
    out.textContent = JSON.stringify({
      status: response.status,
      requestId: response.headers.get("X-Request-Id"),
      body: body,
    });
  })
  .catch((error) => { out.textContent = "failed: " + error; });
</script></body></html>
"""


@contextmanager
def page_server(content: Callable[[], str]) -> Iterator[str]:
    """Serves ``content()`` at / on PAGE_HOST and a free port; yields the page's origin."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            body = content().encode() if self.path == "/" else b""
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer((PAGE_HOST, 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{PAGE_HOST}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Pages:
    """The page's HTML, filled in once the API's address and the token are known."""

    def __init__(self) -> None:
        self.content = ""

    def html(self) -> str:
        return self.content

    def fill(self, api: str, token: str) -> None:
        values = {"__API__": json.dumps(api + ENDPOINT), "__TOKEN__": json.dumps(token)}
        self.content = PAGE
        for name, value in values.items():
            self.content = self.content.replace(name, html.escape(value, quote=False))


@pytest.fixture(scope="module")
def cross_origin(tmp_path_factory):
    """(listed page origin, unlisted page origin, the demo organization's manifest) with the
    API served
    by gunicorn on a database seeded with the demo data, LMS_CORS_ORIGINS naming the first
    origin only."""
    var = tmp_path_factory.mktemp("cors")
    pages = Pages()
    with page_server(pages.html) as listed, page_server(pages.html) as unlisted:
        env = clean_env(
            LMS_VAR_DIR=str(var),
            DATABASE_URL=f"sqlite:///{var / 'db.sqlite3'}",
            LMS_CORS_ORIGINS=listed,
            LMS_LOG_LEVEL="WARNING",
        )
        for step in (["migrate", "--noinput"], ["seed_demo", "--json"]):
            done = manage(*step, env=env, timeout=300)
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        demo = json.loads(done.stdout)["org"]
        with gunicorn_server(env, log_path=var / "gunicorn.log", workers=1) as server:
            pages.fill(server.url, demo["tokens"]["learner"])
            yield listed, unlisted, demo


def shown(browser, origin: str) -> str:
    context = browser.new_context(locale="en-US")
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        page.goto(origin + "/")
        page.wait_for_function("document.getElementById('out').textContent !== 'waiting'")
        return page.text_content("#out") or ""
    finally:
        context.close()


def test_a_page_on_a_listed_origin_reads_the_api_with_a_token(browser, cross_origin):
    listed, _, demo = cross_origin
    answer = json.loads(shown(browser, listed))
    assert answer["status"] == 200
    # An exposed header: the page can read the request id of its call.
    assert answer["requestId"]
    # The learner's courses: the published one they are enrolled in, not the unpublished one.
    assert answer["body"]["total"] == 1
    [course] = answer["body"]["rows"]
    assert course["id"] == demo["courses"][0]["id"]
    assert course["title"] and course["activityCount"] == len(demo["courses"][0]["published"])


def test_a_page_on_an_origin_not_listed_cannot(browser, cross_origin):
    _, unlisted, _ = cross_origin
    text = shown(browser, unlisted)
    assert text.startswith("failed: TypeError"), text
