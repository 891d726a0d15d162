"""``webhook(...)``: a job that delivers one event to one endpoint.

It is a ``job()`` — enqueue, retries with core's backoff, the dead-letter path and
``jobs show`` all apply — whose body reads the endpoint and the event afresh on every
attempt (never checkpointed: a rotated secret or a fixed URL takes effect on the next
retry), signs the request the Standard Webhooks way, and writes a ledger row per attempt.
It never owns which endpoints exist or what an event means: the fan-out is the app's loop.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from ferry._checks import require_count
from ferry._clock import Clock
from ferry._duration import Duration, to_ms
from ferry._jobs.context import JobContext
from ferry._jobs.declaration import JobHandle, job
from ferry._jobs.facade import current_job_driver
from ferry._jobs.policy import Retry
from ferry._jobs.verdict import NoRetry, RetryAfter
from ferry._payload import to_json
from ferry._webhooks.ledger import (
    STREAK_READ,
    AttemptOutcome,
    RecordsWebhookLedger,
    WebhookAttempt,
    WebhookLedger,
)
from ferry._webhooks.signing import secret_key, signed_headers
from ferry._webhooks.targets import check_target, egress_proxy, transport_for
from ferry.drivers.capabilities import RECORDS
from ferry.drivers.protocol import JsonValue
from ferry.errors import FerryError

DEFAULT_WEBHOOK_DISABLE_AFTER = 10
"""Consecutive failed attempts after which an endpoint is disabled."""

DEFAULT_WEBHOOK_RETRY = Retry(attempts=8, backoff="exponential", base="10s", max="1h")
MAX_RETRY_AFTER_MS = 24 * 3_600_000
"""The longest ``Retry-After`` honoured; a receiver cannot park a delivery for longer."""


@dataclass(frozen=True, slots=True)
class WebhookEndpoint:
    """Where to deliver: the app's endpoint row as the webhook needs it.

    Every secret in ``secrets`` signs (rotation: add the new one, retire the old one
    once receivers have switched); ``enabled`` is the app's own switch.
    """

    id: str
    url: str
    secrets: Sequence[str]
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class WebhookEvent:
    """What to deliver: ``id`` becomes ``webhook-id`` (the same on every retry, so a
    receiver dedupes on it), ``topic`` the ``type`` and ``body`` the ``data`` of the JSON."""

    id: str
    topic: str
    body: JsonValue


class WebhookDelivery(BaseModel):
    """The input of a webhook run: pointers, never the event itself."""

    endpoint_id: str
    event_id: str
    tenant: str | None = None


InputT = TypeVar("InputT", bound=WebhookDelivery)


def webhook(
    *,
    name: str,
    endpoint: Callable[[InputT], Awaitable[WebhookEndpoint | None]],
    event: Callable[[InputT], Awaitable[WebhookEvent | None]],
    ledger: WebhookLedger | None = None,
    input: type[InputT] = WebhookDelivery,  # type: ignore[assignment]
    tenant: Callable[[InputT], str | None] | None = None,
    disable_after: int = DEFAULT_WEBHOOK_DISABLE_AFTER,
    retry: Retry = DEFAULT_WEBHOOK_RETRY,
    timeout: Duration = "60s",
    request_timeout: Duration = "15s",
    queue: str = "default",
    allow_private: bool = False,
    on_disabled: Callable[[str, str], Awaitable[None]] | None = None,
    proxy: str | None = None,
) -> JobHandle[InputT, dict[str, Any]]:
    """Declare the job that delivers one event to one endpoint.

    ``endpoint``/``event`` look the two up by the input's ids on every attempt; the ledger
    is the job driver's (on its records, ``ferry._webhooks.ledger``) unless one is passed;
    ``on_disabled(endpoint_id, reason)`` lets the app mark its own endpoint row when the
    webhook disables one. ``allow_private`` admits loopback and private targets (SSRF
    guard off): local development only. ``proxy`` (else ``$FERRY_WEBHOOK_PROXY``) is the
    egress proxy requests go through, the target's addresses checked all the same.
    """
    if not (isinstance(input, type) and issubclass(input, WebhookDelivery)):
        raise FerryError(
            "X_INVARIANT",
            f'webhook "{name}" input {input!r} is not a WebhookDelivery model',
            "subclass ferry.WebhookDelivery to add fields to the input",
        )
    require_count(
        disable_after,
        what=f'webhook "{name}" disable_after={{}}',
        fix=f"leave it out for the default {DEFAULT_WEBHOOK_DISABLE_AFTER}, or pass a number >= 1",
    )
    if disable_after > STREAK_READ:
        raise FerryError(
            "X_INVARIANT",
            f'webhook "{name}" disable_after={disable_after} is more failures than the ledger '
            f"counts back ({STREAK_READ})",
            f"pass disable_after={STREAK_READ} or fewer",
        )
    request_timeout_s = to_ms(request_timeout, what="webhook request_timeout") / 1000
    delivery = _Delivery(
        name=name,
        endpoint=endpoint,
        event=event,
        ledger=ledger,
        disable_after=disable_after,
        request_timeout_s=request_timeout_s,
        allow_private=allow_private,
        on_disabled=on_disabled,
        proxy=egress_proxy(proxy, webhook=name),
    )

    async def deliver(input: InputT, ctx: JobContext) -> dict[str, Any]:
        return await delivery.attempt(input, ctx)

    declare = job(
        input=input,
        idempotency_key=lambda i: f"webhook:{name}:{i.endpoint_id}:{i.event_id}",
        tenant=tenant if tenant is not None else (lambda i: i.tenant),
        retry=retry,
        timeout=timeout,
        queue=queue,
        name=name,
    )
    handle = declare(deliver)
    if ledger is None:
        handle.definition.needs = (RECORDS,)  # the driver's records keep the ledger
    return handle


class _Delivery:
    """One webhook's delivery logic; ``attempt`` is the body of every run."""

    def __init__(
        self,
        *,
        name: str,
        endpoint: Callable[[Any], Awaitable[WebhookEndpoint | None]],
        event: Callable[[Any], Awaitable[WebhookEvent | None]],
        ledger: WebhookLedger | None,
        disable_after: int,
        request_timeout_s: float,
        allow_private: bool,
        on_disabled: Callable[[str, str], Awaitable[None]] | None,
        proxy: str | None,
    ) -> None:
        self.name = name
        self.endpoint = endpoint
        self.event = event
        self._ledger = ledger
        self.disable_after = disable_after
        self.request_timeout_s = request_timeout_s
        self.allow_private = allow_private
        self.on_disabled = on_disabled
        self.proxy = proxy

    @property
    def ledger(self) -> WebhookLedger:
        """The ledger passed to ``webhook()``, else the running job driver's."""
        if self._ledger is None:
            return RecordsWebhookLedger(current_job_driver())
        return self._ledger

    async def attempt(self, input: WebhookDelivery, ctx: JobContext) -> dict[str, Any]:
        clock = current_job_driver().clock
        target = await self._endpoint(input)
        keys = _keys(target)
        checked = await check_target(
            target.url, endpoint_id=target.id, allow_private=self.allow_private
        )
        found, body = await self._event(input)
        ctx.signal.throw_if_aborted()
        timestamp_s = clock.now_ms() // 1000
        headers = signed_headers(keys, found.id, timestamp_s, body)
        headers["content-type"] = "application/json"
        started = time.monotonic()
        try:
            async with httpx.AsyncClient(
                transport=transport_for(checked, self.proxy),
                timeout=self.request_timeout_s,
                follow_redirects=False,
            ) as client:
                response = await client.post(target.url, content=body, headers=headers)
        except httpx.HTTPError as unreachable:
            no_response = FerryError(
                "X_WEBHOOK_DELIVERY_FAILED",
                f"webhook {found.id} to endpoint {target.id} got no response "
                f"({type(unreachable).__name__}: {unreachable})",
                "nothing if the receiver is coming back: the run retries",
            )
            await self._settle(input, ctx, clock, found, "failed", None, no_response, started)
            raise no_response from None
        status = response.status_code
        outcome, error = _verdict(status, response.headers, clock, target.id, found.id)
        await self._settle(input, ctx, clock, found, outcome, status, error, started)
        if error is not None:
            raise error
        return {"endpointId": target.id, "eventId": found.id, "status": status}

    async def _endpoint(self, input: WebhookDelivery) -> WebhookEndpoint:
        target = await self.endpoint(input)
        if target is None:
            raise NoRetry(
                "X_WEBHOOK_ENDPOINT_UNKNOWN",
                f'webhook "{self.name}" found no endpoint {input.endpoint_id}',
                "check the endpoint id enqueued, or that endpoint= reads the right table",
            )
        state = await self.ledger.endpoint(target.id)
        if not target.enabled or state.disabled:
            why = f" ({state.disabled_reason})" if state.disabled_reason else " by the app"
            raise NoRetry(
                "X_WEBHOOK_ENDPOINT_DISABLED",
                f"webhook endpoint {target.id} is disabled{why}",
                "fix the receiver, then ledger.enable(endpoint_id) and retry the dead runs",
            )
        return target

    async def _event(self, input: WebhookDelivery) -> tuple[WebhookEvent, bytes]:
        found = await self.event(input)
        if found is None:
            raise NoRetry(
                "X_WEBHOOK_EVENT_UNKNOWN",
                f'webhook "{self.name}" found no event {input.event_id}',
                "check the event id enqueued, or that event= reads the right table",
            )
        if not found.topic or not found.id:
            raise NoRetry(
                "X_WEBHOOK_EVENT_INVALID",
                f"webhook event {input.event_id} has an empty id or topic",
                "give every event an id and a topic such as 'orders.paid'",
            )
        try:
            data = to_json(found.body, what=f"webhook event {found.id} body")
        except FerryError as not_json:
            raise NoRetry("X_WEBHOOK_EVENT_INVALID", not_json.message, not_json.fix) from None
        document = {"type": found.topic, "data": data}
        return found, json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()

    async def _settle(
        self,
        input: WebhookDelivery,
        ctx: JobContext,
        clock: Clock,
        found: WebhookEvent,
        outcome: AttemptOutcome,
        status: int | None,
        error: FerryError | None,
        started: float,
    ) -> None:
        """Write the ledger row; disable the endpoint on a 410 or a long enough streak."""
        now = clock.now_ms()
        streak = await self.ledger.record(
            WebhookAttempt(
                webhook=self.name,
                endpoint_id=input.endpoint_id,
                event_id=found.id,
                message_id=found.id,
                job_id=ctx.job_id,
                attempt=ctx.attempt,
                outcome=outcome,
                status=status,
                code=error.code if error is not None else None,
                message=error.message if error is not None else None,
                duration_ms=int((time.monotonic() - started) * 1000),
                at_ms=now,
            )
        )
        if outcome == "gone":
            await self._disable(input.endpoint_id, "gone", now)
        elif outcome != "delivered" and streak >= self.disable_after:
            await self._disable(input.endpoint_id, f"{streak} consecutive failures", now)
            raise NoRetry(
                "X_WEBHOOK_ENDPOINT_DISABLED",
                f"webhook endpoint {input.endpoint_id} failed {streak} times in a row "
                f"(last: {error.code if error else outcome}) and is now disabled",
                "fix the receiver, then ledger.enable(endpoint_id) and retry the dead runs",
            )

    async def _disable(self, endpoint_id: str, reason: str, now: int) -> None:
        await self.ledger.disable(endpoint_id, reason=reason, at_ms=now)
        if self.on_disabled is not None:
            await self.on_disabled(endpoint_id, reason)


def _keys(target: WebhookEndpoint) -> list[bytes]:
    if isinstance(target.secrets, str) or not target.secrets:
        raise NoRetry(
            "X_WEBHOOK_ENDPOINT_INVALID",
            f"webhook endpoint {target.id} has no list of signing secrets",
            "give the endpoint secrets=[new_webhook_secret()]",
        )
    keys = []
    for index, secret in enumerate(target.secrets):
        try:
            keys.append(secret_key(secret))
        except ValueError as bad:
            raise NoRetry(
                "X_WEBHOOK_ENDPOINT_INVALID",
                f"webhook endpoint {target.id} secret #{index + 1} is malformed: {bad}",
                "store secrets as whsec_<base64>, e.g. from new_webhook_secret()",
            ) from None
    return keys


def _verdict(
    status: int, headers: httpx.Headers, clock: Clock, endpoint_id: str, event_id: str
) -> tuple[AttemptOutcome, FerryError | None]:
    """2xx delivered; 410 gone; 429 and 5xx retried (after ``Retry-After`` when given);
    any other 4xx rejected for good; anything else (1xx, 3xx) failed and retried."""
    where = f"webhook {event_id} to endpoint {endpoint_id}"
    if 200 <= status < 300:
        return "delivered", None
    if status == 410:
        return "gone", NoRetry(
            "X_WEBHOOK_ENDPOINT_DISABLED",
            f"{where} got 410 Gone: the receiver retired the endpoint, which is now disabled",
            "nothing, unless the receiver is back: then ledger.enable(endpoint_id)",
        )
    delay_ms = _retry_after_ms(headers.get("retry-after"), clock)
    if status == 429:
        message = f"{where} was throttled (429)"
        fix = "nothing: the run retries when the receiver said; lower the send rate if it persists"
        if delay_ms is None:
            return "throttled", FerryError("X_WEBHOOK_DELIVERY_THROTTLED", message, fix)
        return "throttled", RetryAfter(
            "X_WEBHOOK_DELIVERY_THROTTLED", message, fix, delay_ms=delay_ms
        )
    if 400 <= status < 500:
        return "rejected", NoRetry(
            "X_WEBHOOK_DELIVERY_REJECTED",
            f"{where} was rejected with {status}",
            "fix the payload or the receiver, then retry the dead run",
        )
    message = f"{where} failed with {status}"
    fix = "nothing if the receiver recovers: the run retries"
    if status >= 500 and delay_ms is not None:
        return "failed", RetryAfter("X_WEBHOOK_DELIVERY_FAILED", message, fix, delay_ms=delay_ms)
    return "failed", FerryError("X_WEBHOOK_DELIVERY_FAILED", message, fix)


def _retry_after_ms(value: str | None, clock: Clock) -> int | None:
    """``Retry-After`` (seconds, or an HTTP date) as a delay; None when absent or garbage."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return min(int(value) * 1000, MAX_RETRY_AFTER_MS)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    delay = int((when - datetime.fromtimestamp(clock.now_ms() / 1000, UTC)).total_seconds() * 1000)
    return min(max(delay, 0), MAX_RETRY_AFTER_MS)
