"""What SIGTERM does to a worker: the ``X_DRAINING`` abort and the drain deadline.

A drain stops claiming, aborts every held run's signal with ``X_DRAINING`` (a body that
stops is *interrupted*: lease released, attempt uncounted, back to ready at once), and
waits for the held runs until ``drain_seconds`` have passed. Runs still going then are
abandoned unsettled: their leases lapse and another worker redelivers them with the
attempt counted. (A second SIGTERM/SIGINT exits at once: ``ferry._lifecycle``.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from ferry._clock import Clock
from ferry._jobs.signal import AbortSignal
from ferry.errors import FerryError

if TYPE_CHECKING:
    pass

logger = logging.getLogger("ferry.worker")


class Drain:
    """One worker's drain: the abort it sends and the deadline the waiting teardown obeys."""

    def __init__(self, worker_id: str, signal: AbortSignal, seconds: float) -> None:
        self._worker_id = worker_id
        self._signal = signal
        self.seconds = seconds
        self.deadline = asyncio.Event()
        self.signal_name: str | None = None
        self._timer: asyncio.Task[None] | None = None

    @property
    def started(self) -> bool:
        """True once a drain began (a second signal is then a forced exit)."""
        return self.signal_name is not None

    def begin(self, signal_name: str, held: int, clock: Clock) -> None:
        """Abort every held run with ``X_DRAINING`` and start the deadline on ``clock``."""
        if self.started:
            return
        self.signal_name = signal_name
        logger.warning(
            "jobs.worker.draining",
            extra={
                "worker_id": self._worker_id,
                "signal": signal_name,
                "held": held,
                "drain_seconds": self.seconds,
            },
        )
        self._signal.abort(
            FerryError(
                "X_DRAINING",
                f"worker {self._worker_id} is draining ({signal_name}); the run goes back to "
                "the queue uncounted",
                "nothing to fix — another worker resumes it from its last completed step",
            )
        )
        self._timer = asyncio.create_task(self._expire(clock), name="ferry-drain-deadline")

    async def _expire(self, clock: Clock) -> None:
        await clock.sleep_ms(int(self.seconds * 1000))
        self.deadline.set()

    async def wait_for(self, held: Collection[asyncio.Future[Any]]) -> list[asyncio.Future[Any]]:
        """Wait for ``held`` (each attempt's report) until the deadline (none without a
        drain); answers those still pending then, for the caller to abandon."""
        deadline = asyncio.ensure_future(self.deadline.wait())
        try:
            while any(not report.done() for report in held):
                pending = [report for report in held if not report.done()]
                await asyncio.wait({*pending, deadline}, return_when=asyncio.FIRST_COMPLETED)
                if deadline.done():
                    break
        finally:
            deadline.cancel()
            if self._timer is not None:
                self._timer.cancel()
        return [report for report in held if not report.done()]
