"""Pruning in bounded batches: one short delete after another until a batch comes back
short, so no delete holds a lock (or Redis' one thread) for long."""

from __future__ import annotations

from collections.abc import Awaitable, Callable


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
