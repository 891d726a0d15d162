"""Webhook deliveries against a real HTTP receiver: what each answer does to the run,
the endpoint and the ledger. The clock is frozen, so retry instants are exact."""

from __future__ import annotations

import itertools
import uuid
from email.utils import formatdate
from typing import Any

import pytest

from ferry._clock import FrozenClock
from ferry._jobs.declaration import JobHandle
from ferry._jobs.execute import execute_job
from ferry._jobs.policy import Retry
from ferry._webhooks import (
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    new_webhook_secret,
    verify_webhook,
    webhook,
)
from ferry._webhooks.ledger import RecordsWebhookLedger, WebhookLedger
from ferry.drivers import memory_job_driver
from ferry.drivers.protocol import ClaimOptions, RunDetail
from ferry.errors import FerryError
from ferry.testing import Harness

from .receiver import Receiver


class PartnerApp:
    """The application's own tables: its endpoints and its events, looked up by id."""

    def __init__(self, url: str, secrets: list[str]) -> None:
        self.endpoints = {"ep-1": WebhookEndpoint("ep-1", url, secrets)}
        self.events = {
            f"ev-{n}": WebhookEvent(f"ev-{n}", "orders.paid", {"orderId": f"o-{n}"})
            for n in range(1, 4)
        }

    async def endpoint(self, delivery: WebhookDelivery) -> WebhookEndpoint | None:
        return self.endpoints.get(delivery.endpoint_id)

    async def event(self, delivery: WebhookDelivery) -> WebhookEvent | None:
        return self.events.get(delivery.event_id)


def declare(app: PartnerApp, ledger: WebhookLedger | None, **options: Any) -> JobHandle[Any, Any]:
    """A webhook with a name of its own (names are global to the process) to loopback."""
    options.setdefault("allow_private", True)
    return webhook(
        name=f"partner-{uuid.uuid4().hex[:8]}",
        endpoint=app.endpoint,
        event=app.event,
        ledger=ledger,
        **options,
    )


async def deliver(
    harness: Harness, hook: JobHandle[Any, Any], event_id: str = "ev-1", endpoint_id: str = "ep-1"
) -> RunDetail:
    """Enqueue one delivery, run it to its end, and answer the run."""
    with harness.installed():
        enqueued = await hook.enqueue({"endpoint_id": endpoint_id, "event_id": event_id})
    await harness.drain()
    run = await harness.driver.introspect.get_run(enqueued.job_id)
    assert run is not None
    return run


async def test_the_receiver_verifies_a_delivery_with_the_verifier_helper(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger, clock: FrozenClock
) -> None:
    secret = new_webhook_secret()
    hook = declare(PartnerApp(receiver.url, [secret]), pg_ledger)

    run = await deliver(harness, hook)

    assert run.summary.state == "completed"
    [request] = receiver.received
    assert verify_webhook(secret, request.headers, request.body, now_ms=clock.now_ms()) == "ev-1"
    assert request.headers["webhook-timestamp"] == str(clock.now_ms() // 1000)
    assert request.body == b'{"type":"orders.paid","data":{"orderId":"o-1"}}'
    [attempt] = await pg_ledger.attempts("ep-1")
    assert (attempt.outcome, attempt.status, attempt.job_id) == ("delivered", 200, run.summary.id)


async def test_a_tampered_body_or_a_stale_timestamp_does_not_verify(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger, clock: FrozenClock
) -> None:
    secret = new_webhook_secret()
    await deliver(harness, declare(PartnerApp(receiver.url, [secret]), pg_ledger))
    [request] = receiver.received

    with pytest.raises(FerryError) as tampered:
        verify_webhook(secret, request.headers, request.body + b" ", now_ms=clock.now_ms())
    with pytest.raises(FerryError) as stale:
        verify_webhook(secret, request.headers, request.body, now_ms=clock.advance("6m"))
    with pytest.raises(FerryError) as unsigned:
        verify_webhook(secret, {}, request.body)
    assert {tampered.value.code, stale.value.code, unsigned.value.code} == {
        "X_WEBHOOK_SIGNATURE_INVALID"
    }


async def test_every_active_secret_signs_so_either_side_of_a_rotation_verifies(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger, clock: FrozenClock
) -> None:
    old, new, unrelated = new_webhook_secret(), new_webhook_secret(), new_webhook_secret()
    await deliver(harness, declare(PartnerApp(receiver.url, [old, new]), pg_ledger))
    [request] = receiver.received

    assert len(request.headers["webhook-signature"].split(" ")) == 2
    now = clock.now_ms()
    assert verify_webhook(old, request.headers, request.body, now_ms=now) == "ev-1"
    assert verify_webhook(new, request.headers, request.body, now_ms=now) == "ev-1"
    with pytest.raises(FerryError, match="X_WEBHOOK_SIGNATURE_INVALID"):
        verify_webhook(unrelated, request.headers, request.body, now_ms=now)


async def test_the_endpoint_is_read_per_attempt_so_a_rotated_secret_signs_the_retry(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger, clock: FrozenClock
) -> None:
    old, new = new_webhook_secret(), new_webhook_secret()
    app = PartnerApp(receiver.url, [old])
    hook = declare(app, pg_ledger)
    receiver.answer(503)
    with harness.installed():
        await hook.enqueue({"endpoint_id": "ep-1", "event_id": "ev-1"})
        [claimed] = await harness.driver.claim(ClaimOptions("w", lease_ms=30_000))
        await execute_job(claimed, driver=harness.driver, worker_id="w", lease_ms=30_000)
    app.endpoints["ep-1"] = WebhookEndpoint("ep-1", receiver.url, [new])  # rotated in the app

    await harness.drain()

    first, second = receiver.received
    now = clock.now_ms()
    assert verify_webhook(old, first.headers, first.body, now_ms=now, tolerance="1h")
    assert verify_webhook(new, second.headers, second.body, now_ms=now)
    with pytest.raises(FerryError):
        verify_webhook(old, second.headers, second.body, now_ms=now)
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == "ev-1"


async def test_5xx_is_retried_with_the_job_backoff_until_delivered(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger
) -> None:
    receiver.answer(500, 503)
    hook = declare(
        PartnerApp(receiver.url, [new_webhook_secret()]),
        pg_ledger,
        retry=Retry(attempts=5, base="10s"),
    )

    run = await deliver(harness, hook)

    assert (run.summary.state, run.summary.attempts) == ("completed", 3)
    attempts = list(reversed(await pg_ledger.attempts("ep-1")))
    assert [(a.outcome, a.status) for a in attempts] == [
        ("failed", 500),
        ("failed", 503),
        ("delivered", 200),
    ]
    assert [b.at_ms - a.at_ms for a, b in itertools.pairwise(attempts)] == [10_000, 20_000]
    assert (await pg_ledger.endpoint("ep-1")).consecutive_failures == 0


async def test_429_is_retried_after_the_retry_after_the_receiver_asked_for(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger
) -> None:
    receiver.answer((429, {"Retry-After": "120"}), (503, {"Retry-After": "7"}))
    hook = declare(
        PartnerApp(receiver.url, [new_webhook_secret()]),
        pg_ledger,
        retry=Retry(attempts=5, base="1s"),
    )

    run = await deliver(harness, hook)

    assert run.summary.state == "completed"
    attempts = list(reversed(await pg_ledger.attempts("ep-1")))
    assert [a.code for a in attempts] == [
        "X_WEBHOOK_DELIVERY_THROTTLED",
        "X_WEBHOOK_DELIVERY_FAILED",
        None,
    ]
    assert [b.at_ms - a.at_ms for a, b in itertools.pairwise(attempts)] == [120_000, 7_000]


async def test_410_disables_the_endpoint_and_later_deliveries_are_refused_unsent(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger
) -> None:
    receiver.answer(410)
    disabled: list[tuple[str, str]] = []

    async def on_disabled(endpoint_id: str, reason: str) -> None:
        disabled.append((endpoint_id, reason))

    hook = declare(
        PartnerApp(receiver.url, [new_webhook_secret()]), pg_ledger, on_disabled=on_disabled
    )

    gone = await deliver(harness, hook, "ev-1")
    later = await deliver(harness, hook, "ev-2")

    assert (gone.summary.state, gone.summary.attempts) == ("dead", 1)
    assert gone.summary.last_error is not None
    assert gone.summary.last_error.code == "X_WEBHOOK_ENDPOINT_DISABLED"
    assert later.summary.state == "dead"
    assert later.summary.last_error is not None
    assert later.summary.last_error.code == "X_WEBHOOK_ENDPOINT_DISABLED"
    assert len(receiver.received) == 1
    assert (await pg_ledger.endpoint("ep-1")).disabled
    assert disabled == [("ep-1", "gone")]


async def test_another_4xx_is_rejected_at_once_without_a_retry(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger
) -> None:
    receiver.answer(422)
    hook = declare(PartnerApp(receiver.url, [new_webhook_secret()]), pg_ledger)

    run = await deliver(harness, hook)

    assert (run.summary.state, run.summary.attempts) == ("dead", 1)
    assert run.summary.last_error is not None
    assert run.summary.last_error.code == "X_WEBHOOK_DELIVERY_REJECTED"
    [attempt] = await pg_ledger.attempts("ep-1")
    assert (attempt.outcome, attempt.status) == ("rejected", 422)
    assert not (await pg_ledger.endpoint("ep-1")).disabled


@pytest.mark.parametrize("ledger_kind", ["the driver's own", "memory"])
async def test_the_endpoint_is_disabled_after_disable_after_consecutive_failures(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger, ledger_kind: str
) -> None:
    """Failures count across deliveries: a streak that spans two events disables. With no
    ledger passed, the webhook keeps it in the running driver's own (on its records)."""
    own = ledger_kind == "the driver's own"
    passed = None if own else RecordsWebhookLedger(memory_job_driver())
    ledger = pg_ledger if passed is None else passed
    receiver.answer(*[500] * 10)
    hook = declare(
        PartnerApp(receiver.url, [new_webhook_secret()]),
        passed,
        disable_after=3,
        retry=Retry(attempts=2),
    )

    first = await deliver(harness, hook, "ev-1")
    second = await deliver(harness, hook, "ev-2")

    assert (first.summary.state, first.summary.attempts) == ("dead", 2)
    assert first.summary.last_error is not None
    assert first.summary.last_error.code == "X_WEBHOOK_DELIVERY_FAILED"
    assert (second.summary.state, second.summary.attempts) == ("dead", 1)
    assert second.summary.last_error is not None
    assert second.summary.last_error.code == "X_WEBHOOK_ENDPOINT_DISABLED"
    assert len(receiver.received) == 3
    state = await ledger.endpoint("ep-1")
    assert (state.disabled, state.consecutive_failures) == (True, 3)

    await ledger.enable("ep-1", at_ms=0)
    receiver.script.clear()
    again = await deliver(harness, hook, "ev-3")
    assert again.summary.state == "completed"


async def test_loopback_and_private_targets_are_refused_unless_allowed(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger
) -> None:
    app = PartnerApp(receiver.url, [new_webhook_secret()])
    app.endpoints["metadata"] = WebhookEndpoint(
        "metadata", "http://169.254.169.254/latest/meta-data", [new_webhook_secret()]
    )
    app.endpoints["internal"] = WebhookEndpoint(
        "internal", "http://10.0.0.8:8080/admin", [new_webhook_secret()]
    )
    guarded = declare(app, pg_ledger, allow_private=False)

    runs = [
        await deliver(harness, guarded, endpoint_id=e) for e in ("ep-1", "metadata", "internal")
    ]

    for run in runs:
        assert (run.summary.state, run.summary.attempts) == ("dead", 1)
        assert run.summary.last_error is not None
        assert run.summary.last_error.code == "X_WEBHOOK_ENDPOINT_INVALID"
    assert receiver.received == []
    allowed = await deliver(harness, declare(app, pg_ledger, allow_private=True))
    assert allowed.summary.state == "completed"


async def test_unknown_or_invalid_endpoints_and_events_are_dead_with_their_codes(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger
) -> None:
    app = PartnerApp(receiver.url, [new_webhook_secret()])
    app.endpoints["bad-secret"] = WebhookEndpoint("bad-secret", receiver.url, ["hunter2"])
    app.endpoints["ftp"] = WebhookEndpoint("ftp", "ftp://example.com/x", [new_webhook_secret()])
    app.events["ev-bad"] = WebhookEvent("ev-bad", "orders.paid", {"at": {1, 2}})
    hook = declare(app, pg_ledger)

    cases = {
        ("nope", "ev-1"): "X_WEBHOOK_ENDPOINT_UNKNOWN",
        ("ep-1", "nope"): "X_WEBHOOK_EVENT_UNKNOWN",
        ("ep-1", "ev-bad"): "X_WEBHOOK_EVENT_INVALID",
        ("bad-secret", "ev-1"): "X_WEBHOOK_ENDPOINT_INVALID",
        ("ftp", "ev-1"): "X_WEBHOOK_ENDPOINT_INVALID",
    }
    for (endpoint_id, event_id), code in cases.items():
        run = await deliver(harness, hook, event_id, endpoint_id)
        assert run.summary.state == "dead", (endpoint_id, event_id)
        assert run.summary.last_error is not None
        assert run.summary.last_error.code == code
    assert receiver.received == []


def test_a_webhook_input_must_be_a_webhook_delivery_and_disable_after_positive(
    pg_ledger: WebhookLedger,
) -> None:
    from pydantic import BaseModel

    class Other(BaseModel):
        x: int

    app = PartnerApp("https://example.com", [new_webhook_secret()])
    with pytest.raises(FerryError, match="X_INVARIANT"):
        webhook(
            name="bad-input",
            endpoint=app.endpoint,
            event=app.event,
            ledger=pg_ledger,
            input=Other,  # type: ignore[type-var]
        )
    with pytest.raises(FerryError, match="disable_after"):
        declare(app, pg_ledger, disable_after=0)


async def test_a_retry_after_given_as_an_http_date_is_honoured_on_the_frozen_clock(
    harness: Harness, receiver: Receiver, pg_ledger: WebhookLedger, clock: FrozenClock
) -> None:
    when = formatdate(clock.now_ms() / 1000 + 90, usegmt=True)
    receiver.answer((429, {"Retry-After": when}))
    hook = declare(PartnerApp(receiver.url, [new_webhook_secret()]), pg_ledger)

    run = await deliver(harness, hook)

    assert run.summary.state == "completed"
    first, second = reversed(await pg_ledger.attempts("ep-1"))
    assert second.at_ms - first.at_ms == 90_000
