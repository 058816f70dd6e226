"""Webhook receivers that misbehave, on the loopback, speaking raw TCP: each reads the request
(its head and a Content-Length body; nothing, for TLS) and then hands the connection to a
script that writes whatever it likes, as slowly as it likes. Each connection's times are
recorded."""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Callable


class HostileReceiver:
    def __init__(self, script: Callable[[socket.socket], None], read_request: bool = True):
        self.connections: list[dict] = []
        receiver = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                seen = {"opened": time.monotonic(), "closed": None, "request": b""}
                receiver.connections.append(seen)
                self.request.settimeout(60)
                try:
                    if read_request:
                        seen["request"] = _read_request(self.request)
                    script(self.request)
                except OSError:
                    pass  # the sender hung up: what this receiver waits to see
                finally:
                    seen["closed"] = time.monotonic()

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _read_request(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return data


def trickle(data: bytes, every: float) -> Callable[[socket.socket], None]:
    """Writes ``data`` one byte every ``every`` seconds."""

    def script(sock: socket.socket) -> None:
        for byte in data:
            sock.sendall(bytes([byte]))
            time.sleep(every)

    return script


def repeat(data: bytes, every: float, seconds: float) -> Callable[[socket.socket], None]:
    """Writes ``data`` again and again for ``seconds``, every ``every`` seconds (0: at once)."""

    def script(sock: socket.socket) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            sock.sendall(data)
            if every:
                time.sleep(every)

    return script


def then(*scripts: Callable[[socket.socket], None]) -> Callable[[socket.socket], None]:
    def script(sock: socket.socket) -> None:
        for each in scripts:
            each(sock)

    return script


def send(data: bytes) -> Callable[[socket.socket], None]:
    return lambda sock: sock.sendall(data)


def silent(sock: socket.socket) -> None:
    """Answers nothing, until the sender hangs up (a tarpit)."""
    while sock.recv(65536):
        pass
