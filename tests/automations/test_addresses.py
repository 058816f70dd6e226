"""Which addresses a webhook may reach (CONTRACT 8.8; docs/api.md): global unicast only, with
the IPv4 address inside an IPv6 one judged as IPv4 (NAT64, 6to4, mapped, translated), the
deprecated IPv6 ranges refused, and a refusal that names no address."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from automations import runs
from automations.actions import REFUSED, ActionFailed, _public_address
from automations.delivery import SPECIAL_PURPOSE, is_public
from learn.services import enroll
from tests.helpers import make_member
from tests.learn.factories import CourseFactory

PRIVATE_V4 = ["127.0.0.1", "10.0.0.5", "192.168.1.1", "172.16.0.1", "169.254.169.254", "0.0.0.0"]
PUBLIC_V4 = ["8.8.8.8", "1.1.1.1", "93.184.216.34"]


def nat64(v4: str) -> str:
    return str(ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | _int(v4)))


def six_to_four(v4: str, rest: int = 1) -> str:
    return str(ipaddress.IPv6Address((0x2002 << 112) | (_int(v4) << 80) | rest))


def mapped(v4: str) -> str:
    return f"::ffff:{v4}"


def translated(v4: str) -> str:
    return f"::ffff:0:{v4}"


def compatible(v4: str) -> str:
    return f"::{v4}"


def _int(v4: str) -> int:
    return int(ipaddress.IPv4Address(v4))


WRAPPERS = [nat64, six_to_four, mapped, translated]


@pytest.mark.parametrize("wrap", WRAPPERS, ids=lambda w: w.__name__)
@pytest.mark.parametrize("v4", PRIVATE_V4)
def test_an_ipv6_form_of_a_private_ipv4_address_is_refused(wrap, v4):
    assert not is_public(wrap(v4))


@pytest.mark.parametrize("wrap", WRAPPERS, ids=lambda w: w.__name__)
@pytest.mark.parametrize("v4", PUBLIC_V4)
def test_an_ipv6_form_of_a_public_ipv4_address_is_allowed(wrap, v4):
    """What DNS64 synthesizes for a public name on an IPv6-only network still works."""
    assert is_public(wrap(v4))


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::7f00:1",  # NAT64 to 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 to 169.254.169.254
        "64:ff9b:1::a00:5",  # local-use NAT64: refused whatever it embeds
        "64:ff9b:1:ffff::808:808",
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2002:a00:5:1::1",  # 6to4 of 10.0.0.5
        "::127.0.0.1",  # IPv4-compatible, deprecated: refused whatever it embeds
        "::8.8.8.8",
        "::ffff:127.0.0.1",
        "::ffff:0:7f00:1",  # IPv4-translated 127.0.0.1
        "::ffff:0:a9fe:a9fe",
        "fec0::1",  # site-local, deprecated
        "feff:ffff::1",
        "::1",
        "fe80::1%1",
        "fc00::1",
        "ff02::1",
        "2001:db8::1",
        "2001::1",  # Teredo
        "100.64.0.1",
        "224.0.0.1",
    ],
)
def test_non_public_addresses_are_refused(address):
    assert not is_public(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "2606:4700:4700::1111", "2a00:1450:4001::1"])
def test_public_addresses_are_allowed(address):
    assert is_public(address)


@given(st.ip_addresses(v=4), st.integers(min_value=0, max_value=2**80 - 1))
def test_every_embedding_of_an_ipv4_address_is_judged_as_that_address(v4, rest):
    expected = is_public(str(v4))
    if expected:  # nothing this Python calls non-global is let through
        assert v4.is_global and not v4.is_multicast
    v4 = str(v4)
    assert is_public(nat64(v4)) is expected
    assert is_public(six_to_four(v4, rest)) is expected
    assert is_public(mapped(v4)) is expected
    assert is_public(translated(v4)) is expected
    assert not is_public(compatible(v4))


@given(
    st.integers(min_value=0, max_value=2**80 - 1), st.integers(min_value=0, max_value=2**118 - 1)
)
def test_the_deprecated_and_local_use_ranges_are_refused_whole(local_use, site_local):
    assert not is_public(str(ipaddress.IPv6Address((0x0064FF9B0001 << 80) | local_use)))
    assert not is_public(str(ipaddress.IPv6Address((0b1111111011 << 118) | site_local)))


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "localhost", "64:ff9b::7f00:1", "fec0::1"],
)
def test_a_refused_host_is_refused_without_its_address(settings, host):
    with pytest.raises(ActionFailed) as refused:
        _public_address(host, 80)
    assert str(refused.value) == REFUSED == "refused: not a public address"
    settings.LMS_WEBHOOK_ALLOW_PRIVATE = True
    assert _public_address(host, 80)


@pytest.mark.django_db
def test_a_runs_last_error_says_neither_the_address_nor_whether_the_name_exists(
    api, owner, settings
):
    """An internal name that resolves (``localhost``, to the loopback) and a name that
    resolves nowhere read the same in a run: the tenant learns nothing about either. (Saved
    while private addresses were allowed: with them off, a literal one is refused at save.)"""
    hosts = ["localhost", "127.0.0.1", "no-such-host.invalid", "[64:ff9b::a9fe:a9fe]"]
    automations = []
    settings.LMS_WEBHOOK_ALLOW_PRIVATE = True
    for host in hosts:
        body = {
            "name": f"To {host}",
            "trigger": "enrollment.created",
            "actions": [{"type": "webhook", "input": {"url": f"http://{host}:8080/hook"}}],
        }
        created = api.post("/api/automations", body, token=owner.token)
        assert created.status_code == 201, created.content
        automations.append(created.json()["id"])
    settings.LMS_WEBHOOK_ALLOW_PRIVATE = False
    enroll(membership=make_member(owner.org).membership, course=CourseFactory(org=owner.org))
    for _ in automations:  # each attempt fails and waits for its retry: the next takes another
        runs.execute("")
    errors = []
    for automation in automations:
        url = f"/api/automations/{automation}/runs"
        (run,) = api.get(url, token=owner.token).json()["rows"]
        errors.append(run["actions"][0]["lastError"])
    assert errors == [REFUSED] * len(hosts)


@pytest.mark.parametrize("network", SPECIAL_PURPOSE, ids=str)
def test_every_special_purpose_range_is_refused_whole(network):
    """IANA's special-purpose registries, by our own list: the same refusals on every Python
    (3.11.7's ``is_global`` let 192.0.0.8, 192.88.99.1 and 5f00::1 through)."""
    for ip in (network[0], network[network.num_addresses // 2], network[-1]):
        assert not is_public(str(ip)), ip


@pytest.mark.parametrize("address", ["192.0.0.8", "192.88.99.1", "5f00::1", "3fff::1"])
def test_the_addresses_older_pythons_called_global_are_refused(address):
    assert not is_public(address)
