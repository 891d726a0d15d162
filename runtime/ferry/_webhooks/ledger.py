"""``WebhookLedger``: a row per delivery attempt, and each endpoint's failure streak.

The ledger is how a webhook knows when to disable an endpoint (``disable_after``
consecutive failures, or a 410), and what an operator reads to see what was sent.
``memory_webhook_ledger()`` is for development; ``postgres_webhook_ledger()`` keeps it in
the ferry schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

AttemptOutcome = Literal["delivered", "failed", "throttled", "rejected", "gone"]


@dataclass(frozen=True, slots=True)
class WebhookAttempt:
    """One delivery attempt that reached the network (``status`` None: no response)."""

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
    """An endpoint's current failure streak, and when and why it was disabled."""

    consecutive_failures: int = 0
    disabled_at_ms: int | None = None
    disabled_reason: str | None = None

    @property
    def disabled(self) -> bool:
        return self.disabled_at_ms is not None


class WebhookLedger(Protocol):
    """Where webhook attempts and endpoint states are kept."""

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


class MemoryWebhookLedger:
    """The ledger in this process's memory: for development and tests, never production."""

    def __init__(self) -> None:
        self._attempts: list[WebhookAttempt] = []
        self._endpoints: dict[str, EndpointState] = {}

    async def record(self, attempt: WebhookAttempt) -> int:
        self._attempts.append(attempt)
        state = self._endpoints.get(attempt.endpoint_id, EndpointState())
        streak = 0 if attempt.outcome == "delivered" else state.consecutive_failures + 1
        self._endpoints[attempt.endpoint_id] = replace(state, consecutive_failures=streak)
        return streak

    async def endpoint(self, endpoint_id: str) -> EndpointState:
        return self._endpoints.get(endpoint_id, EndpointState())

    async def disable(self, endpoint_id: str, *, reason: str, at_ms: int) -> None:
        state = self._endpoints.get(endpoint_id, EndpointState())
        if not state.disabled:
            self._endpoints[endpoint_id] = replace(
                state, disabled_at_ms=at_ms, disabled_reason=reason
            )

    async def enable(self, endpoint_id: str, *, at_ms: int) -> None:
        if endpoint_id in self._endpoints:
            self._endpoints[endpoint_id] = EndpointState()

    async def attempts(self, endpoint_id: str, *, limit: int = 50) -> Sequence[WebhookAttempt]:
        mine = [a for a in reversed(self._attempts) if a.endpoint_id == endpoint_id]
        return mine[:limit]


def memory_webhook_ledger() -> MemoryWebhookLedger:
    """A ledger in memory (development only: it forgets everything when the process ends)."""
    return MemoryWebhookLedger()
