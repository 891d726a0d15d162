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
import socket
from dataclasses import dataclass
from typing import TypeAlias
from urllib.parse import urlsplit

import httpx

from ferry._jobs.verdict import NoRetry
from ferry.errors import FerryError

Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_WHOLLY_IPV4 = ("IPv4-mapped", "IPv4-compatible")
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
    elif address in _IPV4_COMPATIBLE and int(address) > 1:  # :: and ::1 are IPv6's own
        found.append(("IPv4-compatible", low32))
    if any(address in prefix for prefix in _NAT64):
        # RFC 6052 /96 layout, what DNS64 synthesises; a local-use prefix laid out
        # otherwise carries zeros here, which is refused too.
        found.append(("NAT64", low32))
    if address.sixtofour is not None:
        found.append(("6to4", address.sixtofour))
    if address.teredo is not None:
        server, client = address.teredo
        found += [("Teredo server", server), ("Teredo client", client)]
    return found


async def check_target(url: str, *, endpoint_id: str, allow_private: bool) -> CheckedTarget:
    """Refuse ``url`` unless it is http(s) and resolves only to public addresses; answers
    the address the request must connect to."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NoRetry(
            "X_WEBHOOK_ENDPOINT_INVALID",
            f"webhook endpoint {endpoint_id} has URL {url!r}, which is not an http(s) URL",
            "store an absolute https:// URL for the endpoint",
        )
    if allow_private:
        return CheckedTarget(url, parts.hostname, None)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            parts.hostname, port, type=socket.SOCK_STREAM
        )
    except OSError as unresolved:
        raise FerryError(
            "X_WEBHOOK_DELIVERY_FAILED",
            f"webhook endpoint {endpoint_id} host {parts.hostname!r} did not resolve "
            f"({unresolved})",
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
    return CheckedTarget(url, parts.hostname, str(addresses[0]))


def transport_for(target: CheckedTarget) -> httpx.AsyncBaseTransport:
    """An HTTP transport that connects to ``target``'s checked address (never resolving
    its host again), or an ordinary one when nothing was checked."""
    if target.address is None:
        return httpx.AsyncHTTPTransport()
    return _PinnedTransport(target.host, target.address)


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
