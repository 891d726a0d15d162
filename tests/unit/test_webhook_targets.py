"""The SSRF table: every way of writing an address, judged by where it really leads.

IPv6 carries IPv4 addresses in several forms (IPv4-mapped and -compatible, SIIT
IPv4-translated, NAT64 under every RFC 6052 layout, 6to4, ISATAP, Teredo); a gateway turns
each back into its IPv4 address, so each is judged by that.
"""

from __future__ import annotations

import ipaddress

import pytest

from ferry._webhooks.targets import internal_reason

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("10.0.0.8", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("169.254.169.254", "link-local"),  # the cloud metadata service
    ("100.64.0.1", "shared"),
    ("0.0.0.0", "private"),
    ("192.0.2.1", "reserved"),
    ("224.0.0.1", "multicast"),
    ("255.255.255.255", "private"),
    ("::1", "loopback"),
    ("::", "private"),
    ("fe80::1", "link-local"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("fec0::1", "site-local"),
    ("ff02::1", "multicast"),
    ("::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1"),
    ("::ffff:169.254.169.254", "IPv4-mapped form of 169.254.169.254"),
    ("::7f00:1", "IPv4-compatible form of 127.0.0.1"),
    ("::a9fe:a9fe", "IPv4-compatible form of 169.254.169.254"),
    ("64:ff9b::a9fe:a9fe", "NAT64 form of 169.254.169.254"),
    ("64:ff9b::7f00:1", "NAT64 form of 127.0.0.1"),
    ("64:ff9b::a00:8", "NAT64 form of 10.0.0.8"),
    ("64:ff9b:1::a9fe:a9fe", "NAT64 form of 169.254.169.254"),
    ("64:ff9b:1:ab::", "NAT64 form of 0.0.0.0"),
    ("2002:7f00:1::", "6to4 form of 127.0.0.1"),
    ("2002:a9fe:a9fe::1", "6to4 form of 169.254.169.254"),
    ("2002:a00:8::", "6to4 form of 10.0.0.8"),
    ("2001:0:808:808::80ff:fffe", "Teredo client form of 127.0.0.1"),
    ("2001:0:a00:8::f7f7:f7f7", "Teredo server form of 10.0.0.8"),
    ("2001:0:808:808::f7f7:f7f7", "Teredo tunnel"),  # both ends public: still a tunnel
    ("::ffff:0:7f00:1", "SIIT IPv4-translated form of 127.0.0.1"),
    ("::ffff:0:a9fe:a9fe", "SIIT IPv4-translated form of 169.254.169.254"),
    ("::ffff:0:a00:8", "SIIT IPv4-translated form of 10.0.0.8"),
    ("64:ff9b:1:7f00:1::", "NAT64 form of 127.0.1.0"),  # the /48 layout of 127.0.x.x
    ("64:ff9b:1:a:0:a00:100:0", "NAT64 form of 10.0.10.0"),  # the /56 layout
    ("64:ff9b:1:0:a:a00:800:0", "NAT64 form of 10.10.0.8"),  # the /64 layout
    ("64:ff9b:1::808:808", "NAT64 form of 0.0.0.8"),  # 8.8.8.8 as /96, 0.0.0.8 as /64
    ("64:ff9b:1:808:808:808:808:808", "local-use NAT64"),  # public in every layout
    ("2600::5efe:7f00:1", "ISATAP form of 127.0.0.1"),
    ("2600::200:5efe:a9fe:a9fe", "ISATAP form of 169.254.169.254"),
]
PUBLIC = [
    "8.8.8.8",
    "1.1.1.1",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",  # IPv4-mapped: it is 8.8.8.8
    "64:ff9b::808:808",  # NAT64 of 8.8.8.8: an IPv6-only cluster reaching a public host
    "2002:808:808::1",  # 6to4 of 8.8.8.8
    "::ffff:0:808:808",  # SIIT of 8.8.8.8
    "2600::200:5efe:808:808",  # ISATAP of 8.8.8.8
]


@pytest.mark.parametrize(("address", "reason"), REFUSED)
def test_an_internal_address_is_refused_in_every_form_it_can_be_written(
    address: str, reason: str
) -> None:
    found = internal_reason(ipaddress.ip_address(address))
    assert found is not None and reason in found, found


@pytest.mark.parametrize("address", PUBLIC)
def test_a_public_address_passes_in_every_form(address: str) -> None:
    assert internal_reason(ipaddress.ip_address(address)) is None
