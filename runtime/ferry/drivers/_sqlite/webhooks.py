"""The webhook ledger in the driver's file: a row per attempt, a streak per endpoint.

Recording an attempt and moving its endpoint's streak is one transaction, so concurrent
deliveries to one endpoint (from any process on the file) count every failure.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import asdict

from ferry.drivers._sqlite.database import Database
from ferry.drivers.protocol import EndpointState, WebhookAttempt


class SqliteWebhookLedger:
    """``ferry_webhook_attempts`` and ``ferry_webhook_endpoints``."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def record(self, attempt: WebhookAttempt) -> int:
        queries = self._db.queries
        row = asdict(attempt)

        def record(c: sqlite3.Connection) -> int:
            c.execute(queries["webhook_attempt_insert"], row)
            [[streak]] = c.execute(queries["webhook_streak"], row).fetchall()
            return int(streak)

        return await self._db.transaction(record)

    async def endpoint(self, endpoint_id: str) -> EndpointState:
        rows = await self._db.fetch("webhook_endpoint_state", {"endpoint_id": endpoint_id})
        if not rows:
            return EndpointState()
        [row] = rows
        return EndpointState(
            consecutive_failures=row["consecutive_failures"],
            disabled_at_ms=row["disabled_at_ms"],
            disabled_reason=row["disabled_reason"],
        )

    async def disable(self, endpoint_id: str, *, reason: str, at_ms: int) -> None:
        parameters = {"endpoint_id": endpoint_id, "reason": reason, "at_ms": at_ms}
        await self._db.execute("webhook_disable", parameters)

    async def enable(self, endpoint_id: str, *, at_ms: int) -> None:
        parameters = {"endpoint_id": endpoint_id, "at_ms": at_ms}
        await self._db.execute("webhook_enable", parameters)

    async def attempts(self, endpoint_id: str, *, limit: int = 50) -> Sequence[WebhookAttempt]:
        parameters = {"endpoint_id": endpoint_id, "limit": limit}
        rows = await self._db.fetch("webhook_attempts", parameters)
        return [WebhookAttempt(**dict(row)) for row in rows]
