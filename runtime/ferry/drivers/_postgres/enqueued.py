"""Resolving a batch of enqueue requests to runs: write what is new, look up the keys taken.

The enqueue statements skip a key that already has a run (``ON CONFLICT DO NOTHING``) and
answer only what they wrote; a second statement (``enqueue_existing``) finds the runs
holding the skipped keys, in a snapshot of its own that also sees a key another
transaction committed meanwhile. A run pruned between the two left its key free again, so
its request is written on the next pass. The application's enqueue (``enqueue``) and a
parent's fan-out (``enqueue_children``) resolve alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from ferry.drivers._postgres.joined import Row
from ferry.drivers.protocol import EnqueueRequest, EnqueueResult

Write = Callable[[list[EnqueueRequest]], Awaitable[Sequence[Row]]]
"""Write the requests (keys distinct); answers a row (``idempotency_key``, ``id``) per run
written."""
Existing = Callable[[list[str]], Awaitable[Sequence[Row]]]
"""The runs holding these keys, a row (``idempotency_key``, ``id``) each."""


async def resolved(
    requests: Sequence[EnqueueRequest], write: Write, existing: Existing
) -> list[EnqueueResult]:
    """One result per request, in request order; a key repeated in the batch, or one that
    already had a run, is deduplicated."""
    first: dict[str, int] = {}  # key -> the request that writes it; later ones dedupe
    for index, request in enumerate(requests):
        first.setdefault(request.idempotency_key, index)
    runs: dict[str, EnqueueResult] = {}
    pending = [requests[i] for i in first.values()]
    while pending:
        written = await write(pending)
        runs.update((r["idempotency_key"], EnqueueResult(r["id"], False)) for r in written)
        taken = [r.idempotency_key for r in pending if r.idempotency_key not in runs]
        if taken:
            runs.update(
                (r["idempotency_key"], EnqueueResult(r["id"], True)) for r in await existing(taken)
            )
        # A run pruned between the two statements left its key free: write it again.
        pending = [r for r in pending if r.idempotency_key not in runs]
    return [
        EnqueueResult(runs[r.idempotency_key].job_id, True)
        if first[r.idempotency_key] != index
        else runs[r.idempotency_key]
        for index, r in enumerate(requests)
    ]
