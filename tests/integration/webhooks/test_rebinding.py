"""DNS rebinding: the address a webhook's host was checked at is the one it connects to.

A resolver that answers a public address to the first lookup and 127.0.0.1 to every later
one is the attack: a sender that looked the name up again for the connection would post
to a service on the sender's own loopback. The real system resolver is swapped for such a
one (``socket.getaddrinfo``, which both the check and the HTTP client's connect go through).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ferry._jobs.policy import Retry
from ferry._webhooks import new_webhook_secret
from ferry._webhooks.ledger import WebhookLedger
from ferry._webhooks.targets import CheckedTarget, transport_for
from ferry.drivers.protocol import RunDetail
from ferry.testing._harness import Harness

from .receiver import Receiver
from .test_delivery import PartnerApp, declare, deliver

HOST = "partner.rebind.test"
PUBLIC = "2001:4860:4860::8888"  # a global address: no route from here, so it fails fast


class RebindingResolver:
    """Answers ``HOST`` with a public address once, then with loopback; counts lookups."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.lookups = 0

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != HOST:
            return self.real(host, port, *args, **kwargs)
        self.lookups += 1
        answer = PUBLIC if self.lookups == 1 else "127.0.0.1"
        return self.real(answer, port, *args, **kwargs)


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[RebindingResolver]:
    rebinding = RebindingResolver(socket.getaddrinfo)
    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    yield rebinding


async def deliver_to_rebinding_host(
    harness: Harness, receiver: Receiver, ledger: WebhookLedger, *, attempts: int
) -> RunDetail:
    """One delivery to ``HOST`` (the receiver's port) with the SSRF check on, run to its end."""
    app = PartnerApp(f"http://{HOST}:{receiver.port}/hooks", [new_webhook_secret()])
    hook = declare(
        app, ledger, allow_private=False, request_timeout="2s", retry=Retry(attempts=attempts)
    )
    return await deliver(harness, hook)


async def test_a_rebinding_resolver_cannot_turn_a_checked_host_into_loopback(
    harness: Harness,
    receiver: Receiver,
    pg_ledger: WebhookLedger,
    resolver: RebindingResolver,
) -> None:
    run = await deliver_to_rebinding_host(harness, receiver, pg_ledger, attempts=1)
    assert receiver.received == [], "the delivery reached loopback through a second lookup"
    assert resolver.lookups == 1, "the host was looked up again after its check"
    # It went to the address that was checked (unreachable from here), and failed there.
    assert run.summary.last_error is not None
    assert run.summary.last_error.code == "X_WEBHOOK_DELIVERY_FAILED"


async def test_the_next_attempt_checks_again_and_refuses_what_the_name_now_points_at(
    harness: Harness,
    receiver: Receiver,
    pg_ledger: WebhookLedger,
    resolver: RebindingResolver,
) -> None:
    run = await deliver_to_rebinding_host(harness, receiver, pg_ledger, attempts=2)
    assert receiver.received == []
    assert resolver.lookups == run.summary.attempts == 2  # one lookup per attempt, no more
    assert run.summary.last_error is not None
    assert run.summary.last_error.code == "X_WEBHOOK_ENDPOINT_INVALID"
    assert "127.0.0.1, a loopback address" in run.summary.last_error.message


async def test_the_pinned_transport_keeps_the_host_header_and_reaches_only_that_host(
    receiver: Receiver,
) -> None:
    target = CheckedTarget(f"http://{HOST}:{receiver.port}/hooks", HOST, "127.0.0.1")
    async with httpx.AsyncClient(transport=transport_for(target)) as client:
        response = await client.post(target.url, content=b"{}")
        with pytest.raises(httpx.ConnectError, match="only reaches the checked host"):
            await client.post(f"http://elsewhere.test:{receiver.port}/hooks", content=b"{}")
    assert response.status_code == 200
    [received] = receiver.received
    assert received.headers["host"] == f"{HOST}:{receiver.port}"
