"""The webhook ledger in one process: attempts and endpoint streaks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ferry.drivers.protocol import EndpointState, WebhookAttempt


class MemoryWebhookLedger:
    """The ``WebhookLedger`` of the memory driver (development and tests: it forgets all)."""

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

    def prune(self, before_ms: int) -> int:
        """Forget attempts made before the instant; answers how many went."""
        kept = [a for a in self._attempts if a.at_ms >= before_ms]
        pruned = len(self._attempts) - len(kept)
        self._attempts = kept
        return pruned
