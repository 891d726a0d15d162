"""The webhook ledger under the prefix: an entry per attempt, and each endpoint's streak.

Recording an attempt and moving the endpoint's streak is one script, so concurrent
deliveries to one endpoint count every failure.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

from ferry.drivers._redis.codec import json_text, optional_int
from ferry.drivers._redis.connection import Connection
from ferry.drivers.protocol import EndpointState, WebhookAttempt


class RedisWebhookLedger:
    """Attempts ``{prefix}:wh:attempt:<n>``, indexed per endpoint (newest first) and by
    time (prune); endpoint state ``{prefix}:wh:endpoint:<id>``."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def record(self, attempt: WebhookAttempt) -> int:
        streak = await self._connection.run(
            "webhook_record",
            attempt.endpoint_id,
            attempt.at_ms,
            json_text(dataclasses.asdict(attempt)),
            "1" if attempt.outcome == "delivered" else "0",
        )
        return int(streak)

    async def endpoint(self, endpoint_id: str) -> EndpointState:
        failures, disabled_at, reason = await self._connection.hmget(
            self._connection.keys("wh", "endpoint", endpoint_id),
            ["failures", "disabled_at", "disabled_reason"],
        )
        return EndpointState(int(failures or 0), optional_int(disabled_at), reason)

    async def disable(self, endpoint_id: str, *, reason: str, at_ms: int) -> None:
        await self._connection.run("webhook_disable", endpoint_id, at_ms, reason)

    async def enable(self, endpoint_id: str, *, at_ms: int) -> None:
        client = await self._connection.client()
        await client.delete(self._connection.keys("wh", "endpoint", endpoint_id))

    async def attempts(self, endpoint_id: str, *, limit: int = 50) -> Sequence[WebhookAttempt]:
        if limit <= 0:
            return []
        ids = await self._connection.zrevrange(
            self._connection.keys("wh", "by-endpoint", endpoint_id), 0, limit - 1
        )
        documents = await self._connection.commands(
            *(("HGET", self._connection.keys("wh", "attempt", i), "doc") for i in ids)
        )
        return [WebhookAttempt(**json.loads(d)) for d in documents if d is not None]
