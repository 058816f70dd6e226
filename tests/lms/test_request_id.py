import json
import logging

import pytest

pytestmark = pytest.mark.django_db


def test_every_response_has_a_request_id(api):
    ok = api.get("/healthz")
    missing = api.get("/api/nope")
    assert ok["X-Request-ID"] and missing["X-Request-ID"]
    assert ok["X-Request-ID"] != missing["X-Request-ID"]


def test_sane_incoming_request_id_is_reused(api):
    response = api.get("/api/nope", headers={"X-Request-ID": "abc.DEF-123_x"})
    assert response["X-Request-ID"] == "abc.DEF-123_x"
    assert response.json()["requestId"] == "abc.DEF-123_x"


@pytest.mark.parametrize(
    "incoming", ["", "has space", "x" * 129, "semi;colon", "<script>", "ünïcode"]
)
def test_insane_incoming_request_id_is_replaced(api, incoming):
    response = api.get("/api/nope", headers={"X-Request-ID": incoming})
    assert response["X-Request-ID"] != incoming
    assert 1 <= len(response["X-Request-ID"]) <= 128
    assert response.json()["requestId"] == response["X-Request-ID"]


def test_access_log_line_is_json_with_the_request_id(api, caplog):
    from lms.ops.logs import JsonFormatter

    with caplog.at_level(logging.INFO, logger="lms.access"):
        api.get("/healthz", headers={"X-Request-ID": "trace-42"})
    records = [r for r in caplog.records if r.name == "lms.access"]
    assert records
    line = json.loads(JsonFormatter().format(records[-1]))
    assert line["requestId"] == "trace-42"
    assert line["status"] == 200 and line["path"] == "/healthz"


def test_a_fresh_request_id_is_128_random_bits_in_hex():
    from lms.web.request_id import choose_request_id

    ids = {choose_request_id(None) for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(i) == 32 and int(i, 16) >= 0 and i == i.lower() for i in ids)
    assert len(choose_request_id("")) == 32  # an empty header gets a fresh one too
