"""Lease renewal for one running job, and the verdict when renewals stop landing.

The lease window is measured from the last renewal that *landed*, on the worker's own
clock, and the wait for a renewal is bounded by that window — so a renewal that hangs
(a stalled connection, a proxy dropping packets) is caught exactly like one that fails.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from ferry._clock import Clock
from ferry.drivers.protocol import HeartbeatOptions, JobDriver, Progress


class Heartbeat:
    """Renews one run's lease every ``interval_ms`` until stopped or lost."""

    def __init__(
        self,
        *,
        driver: JobDriver,
        job_id: str,
        worker_id: str,
        lease_ms: int,
        interval_ms: int,
        clock: Clock,
        progress: Callable[[], Progress | None],
        on_failed: Callable[[str], None],
        on_lost: Callable[[], None],
        on_cancel_requested: Callable[[], None] | None = None,
    ) -> None:
        self._driver = driver
        self._job_id = job_id
        self._worker_id = worker_id
        self._lease_ms = lease_ms
        self._interval_ms = max(interval_ms, 1)
        self._clock = clock
        self._progress = progress
        self._on_failed = on_failed
        self._on_lost = on_lost
        self._on_cancel_requested = on_cancel_requested
        self._last_landed_ms = clock.now_ms()
        self._loop: asyncio.Task[None] | None = None
        self._in_flight: asyncio.Task[bool] | None = None
        self.lost = False

    def start(self) -> None:
        """Begin renewing in the background."""
        self._loop = asyncio.create_task(self._run(), name=f"ferry-heartbeat-{self._job_id}")

    async def stop(self) -> None:
        """Stop renewing; a renewal already sent settles first (bounded by the window)."""
        if self._loop is not None:
            self._loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop
        if self._in_flight is not None and not self._in_flight.done():
            await self._bounded(self._in_flight)

    async def _run(self) -> None:
        while True:
            await self._clock.sleep_ms(self._interval_ms)
            self._in_flight = asyncio.create_task(
                self._driver.heartbeat(
                    self._job_id,
                    HeartbeatOptions(
                        self._worker_id,
                        self._lease_ms,
                        self._progress(),
                        on_cancel_requested=self._on_cancel_requested,
                    ),
                )
            )
            landed = await self._bounded(self._in_flight)
            if landed:
                self._last_landed_ms = self._clock.now_ms()
            elif self._clock.now_ms() - self._last_landed_ms >= self._lease_ms:
                self.lost = True
                self._on_lost()
                return

    async def _bounded(self, beat: asyncio.Task[bool]) -> bool:
        """The beat's answer, or False once the window since the last landing closes."""
        remaining = self._last_landed_ms + self._lease_ms - self._clock.now_ms()
        window = asyncio.ensure_future(self._clock.sleep_ms(remaining))
        try:
            done, _ = await asyncio.wait({beat, window}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            window.cancel()
        if beat not in done:
            self._on_failed(f"renewal still unanswered after {self._lease_ms} ms")
            return False
        error = beat.exception()
        if error is not None:
            self._on_failed(f"{type(error).__name__}: {error}")
            return False
        if not beat.result():
            self._on_failed("the run is no longer held by this worker")
            return False
        return True
