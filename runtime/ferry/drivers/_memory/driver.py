"""``memory_job_driver()``: the whole protocol in one process, and nothing durable.

Every run lives in this process's memory and is gone when the driver closes. It is the
driver of local experiments and of ``ferry.testing``; it is never a place to keep work
you cannot lose. Its store is an in-memory SQLite database used on the event loop itself,
through the SQLite driver's own statements — so the memory driver cannot drift from a
durable one, and every capability is written once for both. It keeps nothing in the
application's database, so an enqueue or an outbox append that asks to join a transaction
is refused rather than silently not joining.
"""

from __future__ import annotations

from collections.abc import Sequence

from ferry._clock import Clock, SystemClock
from ferry._payload import DEFAULT_MAX_PAYLOAD_BYTES
from ferry.drivers._ledger import LedgerState, Migration
from ferry.drivers._refusals import no_transaction_to_join
from ferry.drivers._sqlite.driver import SqliteJobDriver
from ferry.drivers._sqlite.target import memory_target
from ferry.drivers._sqlite.wake import DEFAULT_WAKE_POLL_MS
from ferry.drivers.protocol import EnqueueRequest, EnqueueResult


class MemoryJobDriver(SqliteJobDriver):
    """Runs, steps, slots, leases, records and outbox entries in this process: the core
    and every capability, on an in-memory SQLite database."""

    def __init__(
        self, *, clock: Clock | None = None, max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES
    ) -> None:
        super().__init__(
            memory_target(),
            clock=clock or SystemClock(),
            wake_poll_ms=DEFAULT_WAKE_POLL_MS,
            max_payload_bytes=max_payload_bytes,
        )

    @property
    def name(self) -> str:
        return "memory"

    @property
    def location(self) -> None:  # type: ignore[override]
        """None: the runs live in this process only (``ferry jobs drain`` refuses it)."""
        return None

    @property
    def where(self) -> str:
        """Where its runs are, as messages name it (``ferry dev --db memory://``)."""
        return "this process's memory"

    @property
    def migrations(self) -> tuple[Migration, ...]:
        """None: a memory store is new with every driver, so never behind this ferry."""
        return ()

    async def migrate(self) -> list[int]:
        """Nothing to bring forward (the store is made current when it opens)."""
        await self.open()
        return []

    async def inspect(self) -> tuple[str, LedgerState]:
        """What ``ferry doctor`` reports: memory, and a ledger with nothing to judge."""
        return "memory (not durable: gone when this process exits)", LedgerState((), (), None)

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        joining = next((r for r in requests if r.connection is not None), None)
        if joining is not None:
            raise no_transaction_to_join(
                f'enqueue of job "{joining.name}"',
                "memory",
                "use postgres_job_driver() or sqlite_job_driver() for transactional enqueue; "
                "in tests, run the harness on one of them, or enqueue without connection=",
            )
        return await super().enqueue_many(requests)


def memory_job_driver(
    *, clock: Clock | None = None, max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES
) -> MemoryJobDriver:
    """A driver that keeps everything in this process — for tests and experiments only.

    ``max_payload_bytes`` limits one enqueued payload's JSON text (default 1 MiB), the
    same rule as on the durable drivers.
    """
    return MemoryJobDriver(clock=clock, max_payload_bytes=max_payload_bytes)
