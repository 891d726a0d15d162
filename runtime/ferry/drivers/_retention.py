"""Pruning in bounded batches: one short delete after another until a batch comes back
short, so no delete holds a lock (or Redis' one thread) for long."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from ferry._checks import require_count
from ferry.drivers.protocol import PruneReport, RetentionPolicy

Kind = Literal["completed", "dead", "slots", "outbox", "webhook_attempts", "records", "rates"]
"""What a driver prunes: the fields of ``PruneReport``."""


async def pruned_in_batches(
    delete_before: Callable[[int, int], Awaitable[int]],
    retention_ms: int | None,
    *,
    now_ms: int,
    batch: int,
) -> int:
    """Call ``delete_before(cutoff_ms, batch)`` (it deletes up to ``batch`` items older than
    the cutoff and answers how many) until a call deletes fewer than ``batch``; answers the
    total. ``retention_ms`` None keeps everything."""
    if retention_ms is None:
        return 0
    pruned = 0
    while True:
        deleted = await delete_before(now_ms - retention_ms, batch)
        pruned += deleted
        if deleted < batch:
            return pruned


async def pruned(
    policy: RetentionPolicy, now_ms: int, delete: Callable[[Kind, int, int], Awaitable[int]]
) -> PruneReport:
    """A driver's ``prune``: ``delete(kind, cutoff_ms, batch)`` deletes up to ``batch``
    items of ``kind`` older than the cutoff (an expired slot, record or rate window:
    expired by then) and answers how many, called in batches by ``policy``. Idempotency
    keys dedupe only against runs still stored, so a key is free again once its run has
    been pruned."""
    require_count(policy.batch, what="prune batch {}", fix="pass batch=1000 (the default)")

    async def batches(kind: Kind, retention_ms: int | None) -> int:
        async def delete_before(cutoff_ms: int, batch: int) -> int:
            return await delete(kind, cutoff_ms, batch)

        return await pruned_in_batches(
            delete_before, retention_ms, now_ms=now_ms, batch=policy.batch
        )

    return PruneReport(
        completed=await batches("completed", policy.completed_ms),
        dead=await batches("dead", policy.dead_ms),
        slots=await batches("slots", 0),
        outbox=await batches("outbox", policy.published_outbox_ms),
        webhook_attempts=await batches("webhook_attempts", policy.webhook_attempts_ms),
        records=await batches("records", 0),
        rates=await batches("rates", 0),
    )
