"""The webhook ledger in the driver's schema.

``webhook_attempts`` holds a row per attempt and ``webhook_endpoints`` each endpoint's
streak and disablement; recording an attempt and moving the streak is one statement, so
concurrent deliveries to one endpoint count every failure.
"""

from __future__ import annotations

from collections.abc import Sequence

from ferry.drivers._postgres.database import Database
from ferry.drivers.protocol import EndpointState, WebhookAttempt


class PostgresWebhookLedger:
    """``webhook_attempts`` and ``webhook_endpoints`` (migration 3)."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def record(self, attempt: WebhookAttempt) -> int:
        pool = await self._db.pool()
        streak: int = await pool.fetchval(
            self._db.queries["webhook_record"],
            attempt.webhook,
            attempt.endpoint_id,
            attempt.event_id,
            attempt.message_id,
            attempt.job_id,
            attempt.attempt,
            attempt.outcome,
            attempt.status,
            attempt.code,
            attempt.message,
            attempt.duration_ms,
            attempt.at_ms,
        )
        return streak

    async def endpoint(self, endpoint_id: str) -> EndpointState:
        pool = await self._db.pool()
        row = await pool.fetchrow(self._db.queries["webhook_endpoint_state"], endpoint_id)
        if row is None:
            return EndpointState()
        return EndpointState(
            consecutive_failures=row["consecutive_failures"],
            disabled_at_ms=row["disabled_at_ms"],
            disabled_reason=row["disabled_reason"],
        )

    async def disable(self, endpoint_id: str, *, reason: str, at_ms: int) -> None:
        pool = await self._db.pool()
        await pool.execute(self._db.queries["webhook_disable"], endpoint_id, at_ms, reason)

    async def enable(self, endpoint_id: str, *, at_ms: int) -> None:
        pool = await self._db.pool()
        await pool.execute(self._db.queries["webhook_enable"], endpoint_id, at_ms)

    async def attempts(self, endpoint_id: str, *, limit: int = 50) -> Sequence[WebhookAttempt]:
        pool = await self._db.pool()
        rows = await pool.fetch(self._db.queries["webhook_attempts"], endpoint_id, limit)
        return [WebhookAttempt(**dict(row)) for row in rows]
