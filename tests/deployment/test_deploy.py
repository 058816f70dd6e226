"""Deploy hygiene: production settings pass Django's deploy checks, DEBUG is off unless asked
for, and the README's production start command serves the admin and the Swagger UI with
their static files (hashed names from collectstatic, served by WhiteNoise)."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys

import pytest

from tests.deployment.processes import (
    ROOT,
    clean_env,
    get,
    gunicorn_server,
    manage,
    production_env,
)

pytestmark = pytest.mark.processes

# Behind the TLS-terminating proxy the README assumes: the public host, and the scheme the
# proxy saw (without it, LMS_HTTPS=true rightly redirects every request to https).
PROXY_HEADERS = {"Host": "lms.example.com", "X-Forwarded-Proto": "https"}


def test_check_deploy_is_clean_under_production_settings(tmp_path):
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=production_env(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout + result.stderr


def test_production_settings_refuse_to_start_without_a_secret_key(tmp_path):
    env = production_env(tmp_path)
    del env["LMS_SECRET_KEY"]
    result = manage("check", env=env)
    assert result.returncode != 0
    assert "LMS_SECRET_KEY" in result.stderr


def _debug_setting(env: dict[str, str]) -> subprocess.CompletedProcess:
    code = "import django; from django.conf import settings; django.setup(); print(settings.DEBUG)"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, "False"), ("", "False"), ("false", "False"), ("true", "True"), ("1", "True")],
)
def test_debug_is_off_unless_asked_for(tmp_path, value, expected):
    env = clean_env(LMS_VAR_DIR=str(tmp_path))
    if value is not None:
        env["LMS_DEBUG"] = value
    result = _debug_setting(env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


def test_a_misspelt_debug_value_is_refused_not_guessed(tmp_path):
    result = _debug_setting(clean_env(LMS_VAR_DIR=str(tmp_path), LMS_DEBUG="ture"))
    assert result.returncode != 0
    assert "LMS_DEBUG must be a boolean" in result.stderr


@pytest.fixture(scope="module")
def production_server(tmp_path_factory):
    """The README's production steps on a fresh SQLite file: migrate, collectstatic, then
    ``gunicorn -c gunicorn.conf.py`` with one worker on a free loopback port."""
    var_dir = tmp_path_factory.mktemp("production")
    env = production_env(var_dir, LMS_WORKERS="1", LMS_THREADS="2", LMS_LOG_LEVEL="WARNING")
    for step in (["migrate", "--noinput"], ["collectstatic", "--noinput"]):
        result = manage(*step, env=env)
        assert result.returncode == 0, result.stdout + result.stderr
    with gunicorn_server(
        env,
        log_path=var_dir / "gunicorn.log",
        ready_path="/healthz",
        ready_headers={"Host": "lms.example.com"},
    ) as server:
        yield server.port


def test_admin_login_page_is_served(production_server):
    status, headers, body = get(production_server, "/admin/login/", PROXY_HEADERS)
    assert status == 200
    assert headers["content-type"].startswith("text/html")
    assert b"LMS administration" in body
    assert "max-age" in headers["strict-transport-security"]


def test_admin_css_is_served_under_its_hashed_name(production_server):
    _, _, body = get(production_server, "/admin/login/", PROXY_HEADERS)
    stylesheets = re.findall(r'href="(/static/admin/css/[^"]+\.css)"', body.decode())
    hashed = [url for url in stylesheets if re.search(r"\.[0-9a-f]{12}\.css$", url)]
    assert hashed, stylesheets
    status, headers, css = get(production_server, hashed[0], PROXY_HEADERS)
    assert status == 200
    assert headers["content-type"].startswith("text/css")
    assert len(css) > 100
    # WhiteNoise marks hashed files as cacheable forever.
    assert "immutable" in headers.get("cache-control", "")


def test_swagger_ui_and_its_script_are_served(production_server):
    status, headers, body = get(production_server, "/api/docs/", PROXY_HEADERS)
    assert status == 200
    assert headers["content-type"].startswith("text/html")
    scripts = re.findall(r'src="(/static/drf_spectacular_sidecar/[^"]+\.js)"', body.decode())
    assert scripts, body[:2000]
    for script in scripts:
        status, headers, js = get(production_server, script, PROXY_HEADERS)
        assert status == 200, script
        assert "javascript" in headers["content-type"], (script, headers["content-type"])
        assert len(js) > 1000


def test_schema_is_served(production_server):
    status, headers, body = get(production_server, "/api/schema/?format=json", PROXY_HEADERS)
    assert status == 200
    assert headers["content-type"].startswith("application/vnd.oai.openapi+json")
    assert b'"openapi"' in body


def test_plain_http_is_redirected_to_https(production_server):
    status, headers, _ = get(production_server, "/admin/login/", {"Host": "lms.example.com"})
    assert status == 301
    assert headers["location"] == "https://lms.example.com/admin/login/"


def test_an_unknown_host_is_refused_with_the_json_error_body(production_server):
    status, headers, body = get(
        production_server, "/api/bundles", {"Host": "evil.example", "X-Forwarded-Proto": "https"}
    )
    assert status == 400
    assert headers["content-type"].startswith("application/json")
    assert b'"error"' in body and b"Traceback" not in body


def _post(port: int, path: str, body, headers: dict[str, str], **kwargs):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", path, body=body, headers={**PROXY_HEADERS, **headers}, **kwargs)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def test_a_chunked_body_is_read_not_taken_as_empty(production_server):
    """gunicorn decodes the chunks and marks the stream's end; the service reads the body
    (here: over 1 MiB, so 413 before anything else), where Django alone reads it as empty."""
    chunks = (b"x" * 65_536 for _ in range(17))
    status, headers, body = _post(
        production_server,
        "/api/learn/progress",
        chunks,
        {"Content-Type": "application/json"},
        encode_chunked=True,
    )
    assert status == 413, body[:500]
    assert headers["content-type"].startswith("application/json")
    assert json.loads(body)["error"] == "payload_too_large"


def test_a_charset_that_is_not_a_text_encoding_is_415_through_gunicorn(production_server):
    status, _, body = _post(
        production_server,
        "/api/learn/progress?x=1",
        b"{}",
        {"Content-Type": "application/json; charset=rot13"},
    )
    assert status == 415, body[:500]
    assert json.loads(body)["error"] == "unsupported_media_type"
