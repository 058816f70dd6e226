"""The JSON log line: its timestamp, its encoding, and the access line's fields."""

import json
import logging
import sys
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lms.ops.logs import JsonFormatter, _timestamp


def _record(msg="%s %s", args=("GET", "/x"), **extra):
    record = logging.LogRecord("lms.test", logging.INFO, __file__, 1, msg, args, None)
    record.__dict__.update(extra)
    return record


@given(st.floats(min_value=0, max_value=4_102_444_800, allow_nan=False))
def test_timestamp_is_datetimes_utc_time_to_the_microsecond(created):
    expected = datetime.fromtimestamp(created, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert _timestamp(created) == expected


def test_timestamps_within_and_across_seconds():
    assert _timestamp(1_764_000_000.0) == "2025-11-24T16:00:00.000000Z"
    assert _timestamp(1_764_000_000.25) == "2025-11-24T16:00:00.250000Z"
    assert _timestamp(1_764_000_001.5) == "2025-11-24T16:00:01.500000Z"
    assert _timestamp(1_764_000_000.9999999) == "2025-11-24T16:00:01.000000Z"
    assert _timestamp(1_764_000_000.75) == "2025-11-24T16:00:00.750000Z"  # back again


def test_a_line_is_one_json_object_with_the_records_fields():
    record = _record(status=201, path="/api/ünï", durationMs=1.25, nested={"a": [1, 2]})
    line = JsonFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["time"] == _timestamp(record.created)
    assert entry["level"] == "INFO" and entry["logger"] == "lms.test"
    assert entry["message"] == "GET /x"
    assert entry["status"] == 201 and entry["path"] == "/api/ünï"
    assert entry["durationMs"] == 1.25 and entry["nested"] == {"a": [1, 2]}


@pytest.mark.parametrize(
    "value, expected",
    [
        (10**30, 10**30),  # beyond 64 bits: written by json instead
        (datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), "2026-01-02T03:04:05+00:00"),  # ISO 8601
        (b"bytes", "b'bytes'"),
    ],
)
def test_values_json_cannot_take_directly_are_still_written(value, expected):
    assert json.loads(JsonFormatter().format(_record(odd=value)))["odd"] == expected


def test_a_traceback_is_one_field():
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        record = logging.LogRecord("lms.test", logging.ERROR, __file__, 1, "failed", (), None)
        record.exc_info = sys.exc_info()
    entry = json.loads(JsonFormatter().format(record))
    assert "RuntimeError: boom" in entry["traceback"]


@pytest.mark.django_db
def test_the_access_line_names_the_request(api, owner, caplog):
    with caplog.at_level(logging.INFO, logger="lms.access"):
        api.get(
            "/api/bundles?search=x",
            token=owner.token,
            headers={"X-Request-ID": "r-1", "User-Agent": "lms-test/1.0"},
        )
        api.post("/api/learn/progress", {"activity": "nope"}, token=owner.token)
    records = [r for r in caplog.records if r.name == "lms.access"]
    assert len(records) == 2
    first, second = (json.loads(JsonFormatter().format(r)) for r in records)
    assert first["message"] == "GET /api/bundles 200"
    assert (first["method"], first["path"], first["status"]) == ("GET", "/api/bundles", 200)
    assert first["requestId"] == "r-1" and first["durationMs"] >= 0
    assert (second["method"], second["status"]) == ("POST", 400)
    # Who asked: the client's address, the token's organization and the user agent.
    assert first["clientAddress"] == "127.0.0.1" and first["orgId"] == str(owner.membership.org_id)
    assert second["orgId"] == str(owner.membership.org_id)
    assert first["userAgent"] == "lms-test/1.0"


@pytest.mark.django_db
def test_the_access_line_of_an_anonymous_request_behind_a_proxy(client, settings, caplog):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    with caplog.at_level(logging.INFO, logger="lms.access"):
        client.get("/healthz", HTTP_X_FORWARDED_FOR="203.0.113.7, 198.51.100.2")
    [record] = [r for r in caplog.records if r.name == "lms.access"]
    line = json.loads(JsonFormatter().format(record))
    assert (line["clientAddress"], line["orgId"], line["userAgent"]) == (
        "198.51.100.2",
        None,
        None,
    )


@pytest.mark.django_db
def test_no_access_line_when_the_level_is_above_info(api, caplog):
    with caplog.at_level(logging.WARNING, logger="lms.access"):
        api.get("/healthz")
    assert not [r for r in caplog.records if r.name == "lms.access"]
