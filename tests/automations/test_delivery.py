"""A webhook attempt against receivers that misbehave (CONTRACT 8.8): one deadline for the
whole attempt, at most 64 KiB of an answer read, a stalled attempt a failed one, and what a
run then says. The run is recorded by a real event, executed here in-process one attempt at
a time, and read back through the API; the receivers are real sockets on the loopback."""

from __future__ import annotations

import http.server
import shutil
import ssl
import subprocess
import threading
import time

import pytest

from automations import runs
from automations.delivery import ANSWER_LIMIT
from harness.hostile import HostileReceiver, repeat, send, then, trickle
from learn.services import enroll
from tests.deployment.processes import clean_env, manage
from tests.helpers import make_member
from tests.learn.factories import CourseFactory

pytestmark = pytest.mark.django_db

OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 20\r\n\r\n"


@pytest.fixture
def receivers():
    started = []

    def start(*scripts, read_request=True):
        receiver = HostileReceiver(then(*scripts), read_request=read_request)
        started.append(receiver)
        return receiver

    yield start
    for receiver in started:
        receiver.close()


@pytest.fixture
def private_allowed(settings):
    settings.LMS_WEBHOOK_ALLOW_PRIVATE = True  # the receivers are on the loopback


def attempt_once(api, owner, url: str) -> tuple[dict, float]:
    """Save an automation with one webhook to ``url``, cause its event, run the run's first
    attempt; the action as the API then shows it, and how long the attempt took. It is aimed
    at a course of its own, so that the event starts its run alone (a worker takes the run
    most due, not the one its task names)."""
    course = CourseFactory(org=owner.org)
    body = {
        "name": f"Hook {time.monotonic_ns()}",
        "trigger": "enrollment.created",
        "conditions": {"courseIds": [str(course.id)]},
        "actions": [{"type": "webhook", "input": {"url": url}}],
    }
    created = api.post("/api/automations", body, token=owner.token)
    assert created.status_code == 201, created.content
    enroll(membership=make_member(owner.org).membership, course=course)
    runs_url = f"/api/automations/{created.json()['id']}/runs"
    (run,) = api.get(runs_url, token=owner.token).json()["rows"]
    started = time.monotonic()
    runs.execute(run["id"])
    took = time.monotonic() - started
    (run,) = api.get(runs_url, token=owner.token).json()["rows"]
    (action,) = run["actions"]
    return action, took


def assert_failed_attempt(action: dict, message: str) -> None:
    assert action["status"] == "running" and action["attempts"] == 1  # tried again later
    assert action["lastError"] == message and action["response"] is None


def test_a_receiver_trickling_its_body_for_40_s_fails_the_attempt_at_10_s(
    api, owner, receivers, private_allowed
):
    """The deadline as deployed (10 s): the body comes one byte every 2 s, each socket read
    gets its byte in time, and only a deadline for the attempt in all ends it."""
    receiver = receivers(send(OK_HEAD), trickle(b"x" * 20, every=2))
    action, took = attempt_once(api, owner, receiver.url + "/slow")
    assert 9.5 < took < 12
    assert_failed_attempt(action, "No complete answer within 10 s.")
    time.sleep(4.5)  # the receiver's next bytes find the connection closed
    (connection,) = receiver.connections
    assert connection["closed"] is not None and connection["closed"] - connection["opened"] < 15


@pytest.mark.parametrize(
    "script",
    [
        # interim answers, one after another, each in time for a socket read
        repeat(b"HTTP/1.1 100 Continue\r\n\r\n", every=0.1, seconds=30),
        # the head, a byte at a time
        trickle(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", every=0.1),
        # a chunked body whose chunks come slowly and never end
        then(
            send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
            repeat(b"1\r\nx\r\n", every=0.1, seconds=30),
        ),
        # nothing at all after the request
        repeat(b"", every=0.1, seconds=30),
    ],
    ids=["endless-100-continue", "trickled-head", "endless-slow-chunks", "silence"],
)
def test_an_attempt_ends_at_its_deadline_whatever_the_receiver_does(
    api, owner, receivers, private_allowed, settings, script
):
    settings.LMS_WEBHOOK_DEADLINE_SECONDS = 1
    receiver = receivers(script)
    action, took = attempt_once(api, owner, receiver.url + "/stall")
    assert 0.9 < took < 2
    assert_failed_attempt(action, "No complete answer within 1 s.")


def test_a_stalled_tls_handshake_ends_at_the_deadline(
    api, owner, receivers, private_allowed, settings
):
    """The receiver starts a TLS record (a handshake of 16 KiB) and sends it a byte at a
    time: the handshake's own reads each get a byte in time."""
    settings.LMS_WEBHOOK_DEADLINE_SECONDS = 1
    record = b"\x16\x03\x03\x40\x00" + b"\x00" * 16384
    receiver = receivers(trickle(record, every=0.1), read_request=False)
    action, took = attempt_once(api, owner, f"https://127.0.0.1:{receiver.port}/tls")
    assert 0.9 < took < 2
    assert_failed_attempt(action, "No complete answer within 1 s.")


@pytest.fixture
def tls_receiver(tmp_path, monkeypatch):
    """An HTTPS receiver on the loopback with a certificate of its own for 127.0.0.1, which
    the worker trusts (SSL_CERT_FILE) as it trusts the system's authorities."""
    if not shutil.which("openssl"):
        pytest.skip("the openssl command is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            answer = b"signed: " + self.headers["webhook-signature"][:3].encode() + body[:1]
            self.send_response(202)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


@pytest.mark.processes
def test_a_delivery_over_tls_is_answered_and_the_certificate_checked(
    api, owner, private_allowed, tls_receiver
):
    action, _ = attempt_once(api, owner, f"https://127.0.0.1:{tls_receiver}/hook")
    assert action["status"] == "succeeded", action
    assert action["response"]["status"] == 202 and action["response"]["body"] == "signed: v1,{"
    action, _ = attempt_once(api, owner, f"https://localhost:{tls_receiver}/hook")
    assert action["status"] == "running" and action["response"] is None
    assert action["lastError"].startswith("SSLCertVerificationError: ")
    assert "not valid for 'localhost'" in action["lastError"]


def test_endless_fast_interim_answers_fail_once_64_kib_are_read(
    api, owner, receivers, private_allowed
):
    receiver = receivers(repeat(b"HTTP/1.1 100 Continue\r\n\r\n" * 100, every=0, seconds=30))
    action, took = attempt_once(api, owner, receiver.url + "/continue")
    assert took < 5
    assert_failed_attempt(action, "The answer's head is larger than 64 KiB.")


def test_a_head_larger_than_64_kib_fails_the_attempt(api, owner, receivers, private_allowed):
    headers = b"".join(b"X-Filler-%d: %s\r\n" % (n, b"f" * 2000) for n in range(40))
    receiver = receivers(send(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n" + headers + b"\r\n"))
    action, _ = attempt_once(api, owner, receiver.url + "/big-head")
    assert_failed_attempt(action, "The answer's head is larger than 64 KiB.")


def test_an_endless_body_is_read_to_64_kib_and_its_start_kept(
    api, owner, receivers, private_allowed
):
    """A 2xx answer whose body never ends succeeds at once: 64 KiB are read, not more, and
    the run keeps the body's first 1,024 characters as text."""
    start = "Thanks! " + "0123456789" * 200
    receiver = receivers(
        send(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n%s\r\n" % (len(start), start.encode())
        ),
        repeat(b"4000\r\n" + b"y" * 0x4000 + b"\r\n", every=0, seconds=20),
    )
    action, took = attempt_once(api, owner, receiver.url + "/endless")
    assert took < 5
    assert action["status"] == "succeeded" and action["lastError"] is None
    assert action["response"]["status"] == 200 and action["response"]["body"] == start[:1024]
    assert 0 <= action["response"]["durationMs"] < 5000
    time.sleep(0.5)
    (connection,) = receiver.connections
    assert connection["closed"] is not None  # the sender hung up on the endless body
    assert ANSWER_LIMIT == 64 * 1024


@pytest.mark.parametrize(
    ("content_type", "payload", "kept"),
    [
        # NUL cannot be stored in PostgreSQL's JSON; the body is cut to 1,024 characters
        (
            "text/plain; charset=latin-1",
            b"\x00" + "é".encode("latin-1") * 2000,
            "\ufffd" + "é" * 1023,
        ),
        # undecodable bytes become U+FFFD
        ("application/json", b'{"ok": true}\xff', '{"ok": true}\ufffd'),
        # a charset no one knows: UTF-8
        ("text/plain; charset=no-such", "ü".encode(), "ü"),
        # a codec that could make lone surrogates, which JSON text cannot hold
        ("text/plain; charset=unicode_escape", b"a\\ud800b\\x00", "a\ufffdb\ufffd"),
        # no body at all
        (None, b"", ""),
    ],
    ids=["nul-latin-1-cut", "bad-utf-8", "unknown-charset", "surrogate", "empty"],
)
def test_the_answers_body_is_kept_as_text(
    api, owner, receivers, private_allowed, content_type, payload, kept
):
    head = b"HTTP/1.1 503 Busy\r\nContent-Length: %d\r\n" % len(payload)
    if content_type:
        head += b"Content-Type: %s\r\n" % content_type.encode()
    receiver = receivers(send(head + b"\r\n" + payload))
    action, _ = attempt_once(api, owner, receiver.url + "/text")
    assert action["lastError"] == "The endpoint answered 503."
    assert action["response"]["status"] == 503 and action["response"]["body"] == kept


@pytest.mark.processes
def test_the_lease_must_outlive_an_attempt(tmp_path):
    """Settings that would let another worker take a run while its attempt is under way do
    not load (the lease is counted from the start of each attempt)."""
    env = clean_env(LMS_VAR_DIR=str(tmp_path), LMS_AUTOMATION_LEASE_SECONDS="15")
    refused = manage("check", env=env)
    assert refused.returncode != 0
    assert "LMS_AUTOMATION_LEASE_SECONDS must be at least twice" in refused.stderr
    loaded = manage("check", env={**env, "LMS_WEBHOOK_DEADLINE_SECONDS": "7.5"})
    assert loaded.returncode == 0, loaded.stderr[-2000:]
