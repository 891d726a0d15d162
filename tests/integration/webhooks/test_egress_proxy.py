"""The egress proxy is an explicit setting (``webhook(proxy=...)``, ``FERRY_WEBHOOK_PROXY``):
requests go through it, the target's addresses are checked all the same, and a standard
proxy variable in the environment is named in a warning, never silently skipped nor used.
The proxy here is a real HTTP server on loopback that answers for the target."""

from __future__ import annotations

import logging

import pytest

from ferry._webhooks import new_webhook_secret
from ferry._webhooks.ledger import WebhookLedger
from ferry.errors import FerryError
from ferry.testing import Harness

from .receiver import Receiver
from .test_delivery import PartnerApp, declare, deliver

TARGET = "http://partner.example.invalid/hooks"
"""A name no resolver here answers: only the proxy can have delivered to it."""


async def test_a_delivery_goes_through_the_configured_proxy(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger
) -> None:
    app = PartnerApp(TARGET, [new_webhook_secret()])
    # allow_private: the name does not resolve here, and the check would refuse that.
    hook = declare(app, pg_ledger, proxy=f"http://127.0.0.1:{receiver.port}")
    run = await deliver(harness, hook)
    assert run.summary.state == "completed"
    [forwarded] = receiver.received
    assert forwarded.path == TARGET, "the request named the target to the proxy"


async def test_the_target_is_checked_even_through_a_proxy(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger
) -> None:
    app = PartnerApp("http://127.0.0.1:9/admin", [new_webhook_secret()])
    hook = declare(app, pg_ledger, allow_private=False, proxy=f"http://127.0.0.1:{receiver.port}")
    run = await deliver(harness, hook)
    assert run.summary.state == "dead"
    assert run.summary.last_error is not None
    assert run.summary.last_error.code == "X_WEBHOOK_ENDPOINT_INVALID"
    assert receiver.received == [], "a refused target reached the proxy"


async def test_ferry_webhook_proxy_is_the_default_and_https_proxy_is_named_not_used(
    harness: Harness,
    receiver: Receiver,
    pg_ledger: WebhookLedger,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="ferry.webhooks")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens: unused
    app = PartnerApp(receiver.url, [new_webhook_secret()])
    direct = await deliver(harness, declare(app, pg_ledger))
    assert direct.summary.state == "completed"
    assert receiver.received[-1].path == "/hooks", "sent directly, not through HTTP_PROXY"
    [ignored] = [r for r in caplog.records if r.getMessage() == "webhooks.proxy.ignored"]
    assert ignored.variables == ["HTTP_PROXY"]  # type: ignore[attr-defined]

    monkeypatch.setenv("FERRY_WEBHOOK_PROXY", f"http://127.0.0.1:{receiver.port}")
    proxied = await deliver(harness, declare(PartnerApp(TARGET, [new_webhook_secret()]), pg_ledger))
    assert proxied.summary.state == "completed"
    assert receiver.received[-1].path == TARGET


def test_a_proxy_that_is_no_http_url_is_refused_at_declaration() -> None:
    app = PartnerApp(TARGET, [new_webhook_secret()])
    for proxy in ("socks5://127.0.0.1:1080", "127.0.0.1:3128", "http://"):
        with pytest.raises(FerryError) as refused:
            declare(app, None, proxy=proxy)
        assert refused.value.code == "X_INVARIANT" and "egress proxy" in refused.value.message
