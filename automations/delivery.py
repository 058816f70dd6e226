"""One webhook attempt over HTTP(S), bounded in time and in size (CONTRACT 8.8).

``http.client``'s ``timeout=`` bounds each socket operation, not the attempt: a receiver
that sends one byte of its body every few seconds, or one interim ``100 Continue`` after
another, holds the worker for as long as it likes. Here one ``Deadline`` covers the whole
attempt (resolving the name, connecting, the TLS handshake, sending, interim answers, the
head and the body): every socket operation waits at most for what is left of it, and the
name is resolved in a thread of its own that is given up at the deadline. The socket also
counts what it receives: at most ``ANSWER_LIMIT`` bytes of an answer (head and body) are
read, whatever the receiver sends.

Which addresses a webhook may reach is decided here too (``is_public``), on the addresses
that are then connected to, so that no second lookup can answer something else.
"""

from __future__ import annotations

import http.client
import ipaddress
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from email.message import Message

ANSWER_LIMIT = 64 * 1024  # bytes of an answer read, head and body
BODY_CHARACTERS = 1024  # characters of the answer's body kept in the run


class Stalled(Exception):
    """The attempt's deadline passed before it was done."""


class TooLarge(Exception):
    """The receiver sent more than ``ANSWER_LIMIT`` bytes."""


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = time.monotonic()
        self.at = self.started + seconds

    def left(self) -> float:
        """Seconds left; ``Stalled`` once there are none."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise Stalled
        return left

    def elapsed_ms(self) -> int:
        return round((time.monotonic() - self.started) * 1000)


# --- addresses -------------------------------------------------------------------------------

_V4_IN_LAST_32_BITS = (
    ipaddress.ip_network("64:ff9b::/96"),  # NAT64, the well-known prefix (RFC 6052)
    ipaddress.ip_network("::ffff:0:0:0/96"),  # IPv4-translated (RFC 2765 SIIT)
)
_SIX_TO_FOUR = ipaddress.ip_network("2002::/16")  # 6to4: the IPv4 in bits 16..47 (RFC 3056)
# Every range of IANA's special-purpose address registries (IPv4 and IPv6, as of 2025), the
# few it marks globally reachable included (anycast relays, AS112, AMT: no webhook receiver
# lives there), with the multicast blocks: refused by this list, not by Python's
# ``is_global``, whose ranges changed between patch releases (3.11.7 called 192.0.0.8,
# 192.88.99.1 and 5f00::1 global), so that every Python refuses the same addresses.
SPECIAL_PURPOSE = tuple(
    ipaddress.ip_network(network)
    for network in (
        "0.0.0.0/8",  # "this network" (RFC 791)
        "10.0.0.0/8",  # private (RFC 1918)
        "100.64.0.0/10",  # shared address space, carrier-grade NAT (RFC 6598)
        "127.0.0.0/8",  # loopback (RFC 1122)
        "169.254.0.0/16",  # link-local, cloud metadata services (RFC 3927)
        "172.16.0.0/12",  # private (RFC 1918)
        "192.0.0.0/24",  # IETF protocol assignments (RFC 6890), 192.0.0.8 among them
        "192.0.2.0/24",  # documentation, TEST-NET-1 (RFC 5737)
        "192.31.196.0/24",  # AS112-v4 (RFC 7535)
        "192.52.193.0/24",  # AMT (RFC 7450)
        "192.88.99.0/24",  # 6to4 relay anycast, deprecated (RFC 7526)
        "192.168.0.0/16",  # private (RFC 1918)
        "192.175.48.0/24",  # direct delegation AS112 (RFC 7534)
        "198.18.0.0/15",  # benchmarking (RFC 2544)
        "198.51.100.0/24",  # documentation, TEST-NET-2 (RFC 5737)
        "203.0.113.0/24",  # documentation, TEST-NET-3 (RFC 5737)
        "224.0.0.0/4",  # multicast (RFC 5771)
        "240.0.0.0/4",  # reserved (RFC 1112), 255.255.255.255 included
        "::/128",  # unspecified (RFC 4291)
        "::1/128",  # loopback (RFC 4291)
        "::/96",  # IPv4-compatible ::a.b.c.d, deprecated (RFC 4291): refused whatever it holds
        # NAT64 for local use (RFC 8215): where the IPv4 sits depends on the prefix length the
        # network chose, so no embedded address can be checked; nothing public is there.
        "64:ff9b:1::/48",
        "100::/64",  # discard-only (RFC 6666)
        "100:0:0:1::/64",  # dummy prefix (RFC 9780)
        "2001::/23",  # IETF protocol assignments: Teredo, ORCHID, benchmarking, AMT... (RFC 2928)
        "2001:db8::/32",  # documentation (RFC 3849)
        "2620:4f:8000::/48",  # direct delegation AS112 (RFC 7534)
        "3fff::/20",  # documentation (RFC 9637)
        "5f00::/16",  # SRv6 segment identifiers (RFC 9602)
        "fc00::/7",  # unique local (RFC 4193)
        "fe80::/10",  # link-local (RFC 4291)
        "fec0::/10",  # site-local, deprecated (RFC 3879)
        "ff00::/8",  # multicast (RFC 4291)
    )
)


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries and reaches through a translator or a tunnel
    (IPv4-mapped, IPv4-translated, NAT64, 6to4), or None."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if any(ip in network for network in _V4_IN_LAST_32_BITS):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public(address: str) -> bool:
    """Whether a webhook may be sent to ``address``: none of ``SPECIAL_PURPOSE``'s ranges. An
    IPv6 address that embeds an IPv4 one (IPv4-mapped, -translated, NAT64, 6to4) is judged
    by the IPv4 address (Python's ``is_global`` calls ``64:ff9b::7f00:1``, which NAT64 takes
    to 127.0.0.1, global)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if any(ip in network for network in SPECIAL_PURPOSE if network.version == ip.version):
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        inner = embedded_ipv4(ip)
        if inner is not None:
            return is_public(str(inner))
    return True


def is_refused_host(host: str) -> bool:
    """Whether a URL's host is, as written, somewhere ``is_public`` refuses: ``localhost``
    (or a name under it, which resolvers keep on the loopback: RFC 6761), or an address
    literal in any form the resolver reads (IPv4, IPv6 with its embedded forms, and the
    short and numeric IPv4 forms such as ``127.1`` or ``2130706433``). Any other name is
    judged by what it resolves to, when a webhook is sent."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = str(ipaddress.ip_address(host.split("%", 1)[0]))
    except ValueError:
        try:
            address = socket.inet_ntoa(socket.inet_aton(host))
        except (OSError, ValueError):
            return False  # a name
    return not is_public(address)


def resolve(host: str, port: int, deadline: Deadline) -> list[str]:
    """The addresses ``host`` resolves to, within the deadline (``socket.gaierror`` when it
    has none). The system's resolver takes no timeout: it runs in a thread of its own that
    is left to finish alone once the deadline has passed."""
    found: dict = {}

    def lookup() -> None:
        try:
            found["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except Exception as exc:  # handed to the attempt below
            found["error"] = exc

    thread = threading.Thread(target=lookup, name="webhook-resolve", daemon=True)
    thread.start()
    thread.join(deadline.left())
    if thread.is_alive():
        raise Stalled
    if "error" in found:
        raise found["error"]
    return [info[4][0] for info in found["infos"]]


# --- the attempt -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes  # at most ANSWER_LIMIT bytes, less the head
    content_type: str | None

    def text(self) -> str:
        """The body's first ``BODY_CHARACTERS`` characters as text: decoded by its charset
        (UTF-8 when it names none, or none this service knows), with what cannot be stored
        as JSON text (NUL, a lone surrogate) replaced by U+FFFD."""
        message = Message()
        message["content-type"] = self.content_type or "application/octet-stream"
        charset = message.get_content_charset() or "utf-8"
        try:
            text = self.body.decode(charset, errors="replace")
        except (LookupError, ValueError):
            text = self.body.decode("utf-8", errors="replace")
        return _UNSTORABLE.sub("\ufffd", text[:BODY_CHARACTERS])


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class _Budget:
    """What one attempt may still spend: time, and bytes received."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline
        self.bytes_left = ANSWER_LIMIT

    def receivable(self, wanted: int) -> int:
        if self.bytes_left <= 0:
            raise TooLarge
        return min(wanted, self.bytes_left)


class _Bounded:
    """Every blocking operation of the socket waits at most for what is left of the attempt,
    and no more than the budget's bytes are received."""

    budget: _Budget

    def _arm(self) -> None:
        self.settimeout(self.budget.deadline.left())

    def recv_into(self, buffer, nbytes=None, flags=0):
        self._arm()
        with memoryview(buffer) as view:
            wanted = nbytes or view.nbytes
        count = super().recv_into(buffer, self.budget.receivable(wanted), flags)
        self.budget.bytes_left -= count
        return count

    def recv(self, bufsize, flags=0):
        self._arm()
        data = super().recv(self.budget.receivable(bufsize), flags)
        self.budget.bytes_left -= len(data)
        return data

    def send(self, data, flags=0):
        self._arm()
        return super().send(data, flags)

    def sendall(self, data, flags=0):
        self._arm()
        return super().sendall(data, flags)


class _Socket(_Bounded, socket.socket):
    pass


class _TLSSocket(_Bounded, ssl.SSLSocket):
    def do_handshake(self, block=False):
        self._arm()
        return super().do_handshake(block)


def _tls_context() -> ssl.SSLContext:
    """The system's trusted certificates (``SSL_CERT_FILE`` names others), host names
    checked; a fresh context per attempt, so that a changed trust store is seen."""
    context = ssl.create_default_context()
    context.sslsocket_class = _TLSSocket
    return context


class _Connection(http.client.HTTPConnection):
    """Connects to the address that was checked, never to what a second lookup answers, and
    speaks TLS when asked, within the budget. The ``Host`` header is the URL's."""

    def __init__(self, host: str, port: int, *, address: str, tls: bool, budget: _Budget):
        super().__init__(host, port)
        self.default_port = 443 if tls else 80  # the port left out of the Host header
        self._address, self._tls, self._budget = address, tls, budget

    def connect(self) -> None:
        family, kind, proto, _, where = socket.getaddrinfo(
            self._address, self.port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST
        )[0]
        sock = _Socket(family, kind, proto)
        sock.budget = self._budget
        try:
            sock.settimeout(self._budget.deadline.left())
            sock.connect(where)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._tls:
                sock = _tls_context().wrap_socket(
                    sock, server_hostname=self.host, do_handshake_on_connect=False
                )
                sock.budget = self._budget
                sock.do_handshake()
        except BaseException:
            sock.close()
            raise
        self.sock = sock


def attempt(
    *,
    host: str,
    port: int,
    address: str,
    tls: bool,
    method: str,
    target: str,
    headers: dict[str, str],
    body: bytes,
    deadline: Deadline,
) -> Answer:
    """Send one request to ``address`` (``host``'s, already checked) and read the answer,
    all before the deadline. Raises ``Stalled`` when the deadline passes, ``TooLarge`` when
    the answer's head alone exceeds the limit, ``OSError`` or ``http.client.HTTPException``
    when the connection or the answer fails. A body beyond the limit is cut, not an error."""
    budget = _Budget(deadline)
    connection = _Connection(host, port, address=address, tls=tls, budget=budget)
    try:
        connection.request(method, target, body=body, headers=headers)
        answer = connection.getresponse()
        received = bytearray()
        try:
            while chunk := answer.read1(ANSWER_LIMIT - len(received)):
                received += chunk
        except TooLarge:
            pass  # the limit is reached: what was read is the answer as kept
        return Answer(answer.status, bytes(received), answer.getheader("Content-Type"))
    except TimeoutError:
        raise Stalled from None  # a socket operation waited for what was left of the deadline
    finally:
        connection.close()
