"""``BackfillLedger`` on Redis: one hash of checkpoints, each save fenced on its run."""

from __future__ import annotations

import json

from ferry.drivers._redis.codec import json_text
from ferry.drivers._redis.connection import Connection
from ferry.drivers._redis.keyspace import run_id
from ferry.drivers.protocol import BackfillCheckpoint


class RedisBackfillLedger:
    """``{prefix}:backfills``: backfill key -> its last checkpoint as JSON."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def load(self, key: str) -> BackfillCheckpoint | None:
        document = await self._connection.hget(self._connection.keys("backfills"), key)
        return None if document is None else BackfillCheckpoint(**json.loads(document))

    async def save(self, checkpoint: BackfillCheckpoint, *, job_id: str, worker_id: str) -> bool:
        known = run_id(job_id)
        if known is None:
            return False
        document = json_text(
            {
                "key": checkpoint.key,
                "cursor": checkpoint.cursor,
                "processed": checkpoint.processed,
                "pages": checkpoint.pages,
                "done": checkpoint.done,
                "updated_at_ms": checkpoint.updated_at_ms,
            }
        )
        landed = await self._connection.run(
            "backfill_save", known, worker_id, checkpoint.updated_at_ms, checkpoint.key, document
        )
        return bool(landed)
