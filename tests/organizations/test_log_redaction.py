"""An invite's token never reaches a log line whole, whoever writes the line: the view, our
middleware answering before any view (413, an unreadable body), Django refusing a host, the
HTTPS redirect, or an error's traceback."""

from __future__ import annotations

import logging

import pytest

from lms.ops.logs import JsonFormatter, _redactions, redact, register_redaction
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.django_db


@pytest.fixture
def raw_token(org) -> str:
    return make_invite(org)[1]


def formatted_lines(caplog) -> list[str]:
    formatter = JsonFormatter()
    return [formatter.format(record) for record in caplog.records]


def assert_redacted(caplog, raw: str) -> list[str]:
    lines = formatted_lines(caplog)
    assert lines, "nothing was logged"
    assert not [line for line in lines if raw in line or raw[12:] in line]
    return lines


@pytest.mark.parametrize("suffix", ["", "/accept"])
def test_the_views_own_answers(api, raw_token, caplog, suffix):
    with caplog.at_level(logging.INFO):
        api.request("POST" if suffix else "GET", f"/api/organizations/invites/{raw_token}{suffix}")
    lines = assert_redacted(caplog, raw_token)
    assert any(raw_token[:12] + "..." in line for line in lines)


def test_a_refused_host(api, raw_token, caplog):
    """Django's DisallowedHost line carries the request (and so its path)."""
    with caplog.at_level(logging.INFO):
        response = api.get(
            f"/api/organizations/invites/{raw_token}", headers={"Host": "evil.example"}
        )
    assert response.status_code == 400
    lines = assert_redacted(caplog, raw_token)
    assert any("DisallowedHost" in line for line in lines)


def test_a_body_over_the_limit(api, raw_token, caplog):
    with caplog.at_level(logging.INFO):
        response = api.client.generic(
            "POST",
            f"/api/organizations/invites/{raw_token}/accept",
            b"{}",
            content_type="application/json",
            CONTENT_LENGTH=str(2 * 1024 * 1024),
        )
    assert response.status_code == 413
    assert_redacted(caplog, raw_token)


def test_an_unreadable_charset(api, raw_token, caplog):
    with caplog.at_level(logging.INFO):
        response = api.request(
            "POST",
            f"/api/organizations/invites/{raw_token}/accept",
            raw="{}",
            content_type="application/json; charset=utf-8",
            headers={"Transfer-Encoding": "chunked"},
        )
    assert response.status_code in (201, 411)
    assert_redacted(caplog, raw_token)


def test_the_https_redirect(api, raw_token, caplog, settings):
    settings.SECURE_SSL_REDIRECT = True
    with caplog.at_level(logging.INFO):
        response = api.get(f"/api/organizations/invites/{raw_token}")
    assert response.status_code == 301
    assert_redacted(caplog, raw_token)


def test_a_traceback(raw_token, caplog):
    try:
        raise RuntimeError(f"failed on /api/organizations/invites/{raw_token}")
    except RuntimeError:
        logging.getLogger("lms.errors").exception("unhandled")
    assert_redacted(caplog, raw_token)


def test_a_redaction_names_a_literal_of_its_pattern():
    with pytest.raises(ValueError):
        register_redaction(r"\b(sk_[a-z]{4})[a-z]+", r"\1...", contains="key_")


@pytest.mark.parametrize(
    "line",
    [
        "GET /api/organizations/invites/inv_0123456789abcdefghijklmnopqrstuvwxyz 200",
        '{"path": "/api/organizations/invites/inv_0123456789abcdefghij/accept"}',
        "token lms_abcdefgh0123456789abcdefghij in a message",
        "nothing secret here: /api/automations/lms_short",
    ],
)
def test_redact_answers_as_every_pattern_applied_to_every_line(line):
    """The literal test only skips lines no pattern can match."""
    expected = line
    for _, pattern, replacement in _redactions:
        expected = pattern.sub(replacement, expected)
    assert redact(line) == expected
