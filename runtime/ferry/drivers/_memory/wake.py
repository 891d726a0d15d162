"""Wake-ups within one process: each commit wakes every waiter of this driver."""

from __future__ import annotations

from ferry.drivers._wake import Arrivals

IDLE_POLL_MS = 5_000
"""The memory wake never misses a commit in its process; the poll only finds due timers."""


class MemoryWake(Arrivals):
    """Woken by each enqueue (or outbox append) of this driver, and at the instant a run
    enqueued for later falls due; every wait runs on the driver's clock."""

    @property
    def healthy(self) -> bool:
        return True

    @property
    def idle_poll_ms(self) -> int:
        return IDLE_POLL_MS

    def notify(self) -> None:
        """Something is due now."""
        self.announce()
