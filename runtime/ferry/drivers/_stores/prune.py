"""``prune`` over statements: each kind a statement that deletes up to ``:batch`` rows
older than ``:before`` and answers a row per row deleted (``ferry.drivers._retention.pruned``
repeats it, each its own short transaction or script: short locks, and Redis' one thread
never held for long, until a batch comes back short).
"""

from __future__ import annotations

from ferry.drivers._retention import Kind, pruned
from ferry.drivers._stores.statements import Statements
from ferry.drivers.protocol import PruneReport, RetentionPolicy

_STATEMENTS: dict[Kind, str] = {
    "completed": "prune_completed",
    "dead": "prune_dead",
    "slots": "prune_lease_slots",
    "outbox": "outbox_prune",
    "webhook_attempts": "prune_log",
    "records": "prune_records",
    "rates": "prune_rate_windows",
}


async def prune(statements: Statements, policy: RetentionPolicy) -> PruneReport:
    """Delete by ``policy``; answers how many of each kind went."""

    async def delete(kind: Kind, cutoff_ms: int, batch: int) -> int:
        return len(await statements.write(_STATEMENTS[kind], before=cutoff_ms, batch=batch))

    return await pruned(policy, statements.clock.now_ms(), delete)
