"""Where a webhook may be sent: ``http(s)`` URLs whose every address is public.

A webhook URL is written by a customer, and the sender sits inside the application's
network, so an unchecked URL reaches the cloud metadata service or an internal admin
port (SSRF). Every resolved address must be globally routable unless the webhook was
declared with ``allow_private=True`` (local development, tests).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

from ferry._jobs.verdict import NoRetry
from ferry.errors import FerryError


async def check_target(url: str, *, endpoint_id: str, allow_private: bool) -> None:
    """Refuse ``url`` unless it is http(s) and resolves only to public addresses."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NoRetry(
            "X_WEBHOOK_ENDPOINT_INVALID",
            f"webhook endpoint {endpoint_id} has URL {url!r}, which is not an http(s) URL",
            "store an absolute https:// URL for the endpoint",
        )
    if allow_private:
        return
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
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        mapped = getattr(address, "ipv4_mapped", None)
        checked = mapped if mapped is not None else address
        if not checked.is_global or checked.is_multicast:
            raise NoRetry(
                "X_WEBHOOK_ENDPOINT_INVALID",
                f"webhook endpoint {endpoint_id} URL {url!r} resolves to {checked}, a "
                "private, loopback or link-local address",
                "use a public URL; declare the webhook with allow_private=True only for "
                "local development",
            )
