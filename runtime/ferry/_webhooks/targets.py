"""Where a webhook may be sent: ``http(s)`` URLs whose every address is public — and the
one checked address the request then connects to.

A webhook URL is written by a customer, and the sender sits inside the application's
network, so an unchecked URL reaches the cloud metadata service or an internal admin
port (SSRF). Every resolved address must be globally routable unless the webhook was
declared with ``allow_private=True`` (local development, tests). IPv6 has several ways of
writing an IPv4 address inside an IPv6 one (NAT64, 6to4, Teredo, IPv4-compatible and
-mapped); a gateway turns each back into its IPv4 address, so each is judged by that too.

Checking a name and then letting the HTTP client look it up again would let a DNS server
answer "public" to the check and "127.0.0.1" to the connection (DNS rebinding). So the
request connects to the address that was checked, with the URL's host kept for the
``Host`` header and for TLS (SNI and certificate verification).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import socket
from dataclasses import dataclass
from typing import TypeAlias
from urllib.parse import SplitResult, urlsplit

import httpx

from ferry._jobs.verdict import NoRetry
from ferry.errors import FerryError

logger = logging.getLogger("ferry.webhooks")

Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_NAT64_LOCAL_LAYOUTS = (96, 64, 56, 48)
"""The RFC 6052 prefix lengths a local-use NAT64 prefix inside 64:ff9b:1::/48 can have:
each puts the IPv4 address at other bits, and the check cannot know which one the
network's translator uses, so it judges every one."""
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_SIIT = ipaddress.ip_network("::ffff:0:0:0/96")
"""IPv4-translated addresses (RFC 7915 SIIT): a stateless translator maps them to the
IPv4 address in the low 32 bits."""
_ISATAP_IDS = (0x0000_5EFE, 0x0200_5EFE)
"""The ISATAP interface identifiers (RFC 5214): bits 64..95 of the address, with the IPv4
address of the tunnel end in the low 32 bits."""
_WHOLLY_IPV4 = ("IPv4-mapped", "IPv4-compatible", "SIIT IPv4-translated")
"""Forms that are nothing but an IPv4 address in IPv6 notation (NAT64 and 6to4 addresses
are also IPv6 addresses in their own right, judged as such too)."""


@dataclass(frozen=True, slots=True)
class CheckedTarget:
    """A webhook URL that passed the check, and the address its request connects to."""

    url: str
    host: str
    address: str | None
    """The checked address to connect to; None when ``allow_private`` skipped the check
    (the client then resolves the host itself)."""


def internal_reason(address: Address) -> str | None:
    """Why ``address`` is no public destination ("loopback", "NAT64 form of 10.0.0.1, a
    private address", …), or None when it is one."""
    embedded = _embedded_ipv4(address)
    for form, inner in embedded:
        reason = _own_reason(inner)
        if reason is not None:
            return f"the {form} form of {inner}, {reason}"
    if embedded and embedded[0][0] in _WHOLLY_IPV4:
        return None  # it is that IPv4 address, written in IPv6: judged as one
    if isinstance(address, ipaddress.IPv6Address) and address.teredo is not None:
        return "a Teredo tunnel address"
    if address in _NAT64_LOCAL:  # RFC 8215: not globally reachable, whatever it carries
        return "a local-use NAT64 address (64:ff9b:1::/48), not globally reachable"
    return _own_reason(address)


def _own_reason(address: Address) -> str | None:
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address (the cloud metadata service lives there)"
    if address.is_multicast:
        return "a multicast address"
    if isinstance(address, ipaddress.IPv6Address) and address.is_site_local:
        return "a site-local address"
    if address.is_unspecified or not address.is_global:
        return "a private, shared or reserved address"
    return None


def _embedded_ipv4(address: Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address carries, each with the name of its form."""
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    found: list[tuple[str, ipaddress.IPv4Address]] = []
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.ipv4_mapped is not None:
        found.append(("IPv4-mapped", address.ipv4_mapped))
    elif address in _SIIT:
        found.append(("SIIT IPv4-translated", low32))
    elif address in _IPV4_COMPATIBLE and int(address) > 1:  # :: and ::1 are IPv6's own
        found.append(("IPv4-compatible", low32))
    if address in _NAT64:  # the well-known prefix: the /96 layout DNS64 synthesises
        found.append(("NAT64", low32))
    elif address in _NAT64_LOCAL:
        # Every layout's reading is judged; one in 0.0.0.0/8 (often the zero bits of
        # another layout) is named last, so a refusal names the likelier destination.
        readings = dict.fromkeys(_rfc6052_ipv4(address, n) for n in _NAT64_LOCAL_LAYOUTS)
        found += [
            ("NAT64", inner) for inner in sorted(readings, key=lambda inner: inner in _THIS_NETWORK)
        ]
    if (int(address) >> 32) & 0xFFFF_FFFF in _ISATAP_IDS:
        found.append(("ISATAP", low32))
    if address.sixtofour is not None:
        found.append(("6to4", address.sixtofour))
    if address.teredo is not None:
        server, client = address.teredo
        found += [("Teredo server", server), ("Teredo client", client)]
    return found


def _rfc6052_ipv4(address: ipaddress.IPv6Address, prefix_length: int) -> ipaddress.IPv4Address:
    """The IPv4 address a NAT64 address carries under a prefix of ``prefix_length`` bits
    (RFC 6052 section 2.2: the 32 bits follow the prefix, skipping bits 64..71)."""
    bits = int(address)
    if prefix_length == 96:
        return ipaddress.IPv4Address(bits & 0xFFFF_FFFF)
    before_u = 64 - prefix_length  # bits of the IPv4 address above bit 64
    high = (bits >> 64) & ((1 << before_u) - 1)
    low = (bits >> (56 - (32 - before_u))) & ((1 << (32 - before_u)) - 1)
    return ipaddress.IPv4Address((high << (32 - before_u)) | low)


def _http_host(parts: SplitResult) -> str | None:
    """The host of an absolute ``http(s)`` URL, the only kind ferry sends to (else None)."""
    return parts.hostname if parts.scheme in ("http", "https") and parts.hostname else None


async def check_target(url: str, *, endpoint_id: str, allow_private: bool) -> CheckedTarget:
    """Refuse ``url`` unless it is http(s) and resolves only to public addresses; answers
    the address the request must connect to."""
    parts = urlsplit(url)
    host = _http_host(parts)
    if host is None:
        raise NoRetry(
            "X_WEBHOOK_ENDPOINT_INVALID",
            f"webhook endpoint {endpoint_id} has URL {url!r}, which is not an http(s) URL",
            "store an absolute https:// URL for the endpoint",
        )
    if allow_private:
        return CheckedTarget(url, host, None)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as unresolved:
        raise FerryError(
            "X_WEBHOOK_DELIVERY_FAILED",
            f"webhook endpoint {endpoint_id} host {host!r} did not resolve ({unresolved})",
            "nothing if the DNS failure is passing: the run retries",
        ) from None
    addresses = [ipaddress.ip_address(str(info[4][0]).partition("%")[0]) for info in infos]
    for address in addresses:
        reason = internal_reason(address)
        if reason is not None:
            raise NoRetry(
                "X_WEBHOOK_ENDPOINT_INVALID",
                f"webhook endpoint {endpoint_id} URL {url!r} resolves to {address}, {reason}",
                "use a public URL; declare the webhook with allow_private=True only for "
                "local development",
            )
    return CheckedTarget(url, host, str(addresses[0]))


def transport_for(target: CheckedTarget, proxy: str | None = None) -> httpx.AsyncBaseTransport:
    """An HTTP transport that connects to ``target``'s checked address (never resolving
    its host again), or an ordinary one when nothing was checked.

    Through an egress ``proxy`` the request names the host and the proxy resolves and
    connects (TLS must verify the host's name, which a tunnel to an address cannot): the
    target's addresses were still checked, and what the proxy may reach is its operator's
    rule to keep. The environment's proxy variables are never read (an httpx client given
    a transport reads none): a proxy is this explicit setting or none.
    """
    if proxy is not None:
        return httpx.AsyncHTTPTransport(proxy=proxy)
    if target.address is None:
        return httpx.AsyncHTTPTransport()
    return _PinnedTransport(target.host, target.address)


ENVIRONMENT_PROXIES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
"""Variables an HTTP client would usually read, which webhook delivery does not: the
egress proxy is ``webhook(proxy=...)`` or ``FERRY_WEBHOOK_PROXY``."""


def egress_proxy(proxy: str | None, *, webhook: str) -> str | None:
    """The proxy a webhook sends through: ``proxy``, else ``$FERRY_WEBHOOK_PROXY``, else
    none; an ``http(s)://host:port`` URL or ``X_INVARIANT``. With neither set while a
    standard proxy variable is, that variable is named in one warning
    (``webhooks.proxy.ignored``), never silently skipped."""
    chosen = proxy if proxy is not None else os.environ.get("FERRY_WEBHOOK_PROXY") or None
    if chosen is None:
        ignored = [v for v in ENVIRONMENT_PROXIES if os.environ.get(v) or os.environ.get(v.lower())]
        if ignored:
            logger.warning(
                "webhooks.proxy.ignored",
                extra={
                    "webhook": webhook,
                    "variables": ignored,
                    "fix": "set FERRY_WEBHOOK_PROXY (or webhook(proxy=...)) to send through it",
                },
            )
        return None
    if _http_host(urlsplit(chosen)) is None:
        raise FerryError(
            "X_INVARIANT",
            f"webhook {webhook!r} egress proxy {chosen[:80]!r} is not an http(s) URL",
            "give the proxy as http://host:port (webhook(proxy=...) or FERRY_WEBHOOK_PROXY)",
        )
    return chosen


class _PinnedTransport(httpx.AsyncBaseTransport):
    """Sends requests for one host to one address: the URL's host becomes the address,
    while the ``Host`` header (set when the request was built) and the TLS server name
    (``sni_hostname``, also what the certificate is verified against) stay the host."""

    def __init__(self, host: str, address: str) -> None:
        self._host = host
        self._address = address
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host.lower() != self._host.lower():
            raise httpx.ConnectError(
                f"refused: this transport only reaches the checked host {self._host!r}",
                request=request,
            )
        request.url = request.url.copy_with(host=self._address)
        request.extensions = {**request.extensions, "sni_hostname": self._host}
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()
