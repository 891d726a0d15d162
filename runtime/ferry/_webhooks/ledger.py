"""The webhook ledger: a row per delivery attempt, and each endpoint's failure streak.

``WebhookLedger`` is the seam (an application may pass its own, over its own table);
``RecordsWebhookLedger`` is the default, built once on the job driver's ``RecordStore``.
Each endpoint's history is a log of space ``webhook-attempts`` — the attempts, and a
marker ``{"streak": n}`` where the streak was set (``enable`` sets it to 0; an upgrade
carries an older ferry's counter over this way) — and the streak is read off it: the
failed attempts since the newest delivery, plus the newest marker's count. Counting from
the log, not a counter moved by each attempt, is what keeps concurrent deliveries to one
endpoint from losing a failure.
A disabled endpoint is a record of space ``webhook-endpoints``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal, Protocol

from ferry.drivers.capabilities import RECORDS, need
from ferry.drivers.protocol import JobDriver

AttemptOutcome = Literal["delivered", "failed", "throttled", "rejected", "gone"]

ATTEMPTS = "webhook-attempts"
ENDPOINTS = "webhook-endpoints"
STREAK_READ = 1_000
"""The most attempts one streak reading walks back: a streak is never reported longer
(``webhook(disable_after=...)`` is refused above it)."""


@dataclass(frozen=True, slots=True)
class WebhookAttempt:
    """One webhook delivery attempt that reached the network (``status`` None: no response)."""

    webhook: str
    endpoint_id: str
    event_id: str
    message_id: str
    job_id: str
    attempt: int
    outcome: AttemptOutcome
    status: int | None
    code: str | None
    message: str | None
    duration_ms: int
    at_ms: int


@dataclass(frozen=True, slots=True)
class EndpointState:
    """A webhook endpoint's failure streak, and when and why it was disabled."""

    consecutive_failures: int = 0
    disabled_at_ms: int | None = None
    disabled_reason: str | None = None

    @property
    def disabled(self) -> bool:
        return self.disabled_at_ms is not None


class WebhookLedger(Protocol):
    """A row per webhook delivery attempt, and each endpoint's failure streak."""

    async def record(self, attempt: WebhookAttempt) -> int:
        """Store one attempt; answers the endpoint's failure streak after it (a delivery
        resets it to 0)."""
        ...

    async def endpoint(self, endpoint_id: str) -> EndpointState:
        """The endpoint's state (a never-attempted endpoint has the default one)."""
        ...

    async def disable(self, endpoint_id: str, *, reason: str, at_ms: int) -> None:
        """Disable the endpoint: deliveries to it are refused until ``enable``."""
        ...

    async def enable(self, endpoint_id: str, *, at_ms: int) -> None:
        """Enable the endpoint again with a fresh failure streak."""
        ...

    async def attempts(self, endpoint_id: str, *, limit: int = 50) -> Sequence[WebhookAttempt]:
        """The newest attempts to the endpoint, newest first."""
        ...


class RecordsWebhookLedger:
    """The ``WebhookLedger`` on ``driver``'s records (``X_DRIVER_CAPABILITY`` without them)."""

    def __init__(self, driver: JobDriver) -> None:
        self._records = need(driver, RECORDS, by="the webhook ledger")
        self._clock = driver.clock

    async def record(self, attempt: WebhookAttempt) -> int:
        await self._records.append(
            ATTEMPTS, attempt.endpoint_id, asdict(attempt), at_ms=attempt.at_ms
        )
        return await self._streak(attempt.endpoint_id)

    async def endpoint(self, endpoint_id: str) -> EndpointState:
        now = self._clock.now_ms()
        disabled = await self._records.get(ENDPOINTS, endpoint_id, now_ms=now) or {}
        return EndpointState(await self._streak(endpoint_id), **disabled)

    async def disable(self, endpoint_id: str, *, reason: str, at_ms: int) -> None:
        if await self._records.get(ENDPOINTS, endpoint_id, now_ms=at_ms) is None:
            state = {"disabled_at_ms": at_ms, "disabled_reason": reason}
            await self._records.put(ENDPOINTS, endpoint_id, state, now_ms=at_ms)

    async def enable(self, endpoint_id: str, *, at_ms: int) -> None:
        await self._records.append(ATTEMPTS, endpoint_id, {"streak": 0}, at_ms=at_ms)
        await self._records.delete(ENDPOINTS, endpoint_id)

    async def attempts(self, endpoint_id: str, *, limit: int = 50) -> Sequence[WebhookAttempt]:
        attempts: list[WebhookAttempt] = []
        read = limit
        while len(attempts) < limit:
            entries = await self._records.tail(ATTEMPTS, endpoint_id, limit=read)
            attempts = [WebhookAttempt(**e) for e in entries if "outcome" in e][:limit]
            if len(entries) < read:
                break
            read *= 2  # enable markers took some of the places: read further back
        return attempts

    async def _streak(self, endpoint_id: str) -> int:
        streak = 0
        for entry in await self._records.tail(ATTEMPTS, endpoint_id, limit=STREAK_READ):
            if "streak" in entry:
                carried: int = entry["streak"]
                return min(streak + carried, STREAK_READ)
            if entry["outcome"] == "delivered":
                break
            streak += 1
        return streak
