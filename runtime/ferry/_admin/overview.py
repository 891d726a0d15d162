"""Queue overview: depth, state counts and throughput per queue, read from the driver."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ferry.drivers.capabilities import INTROSPECT, need
from ferry.drivers.protocol import JobDriver, JobState

DEFAULT_WINDOW_MS = 5 * 60_000
"""Throughput is measured over the last five minutes unless asked otherwise."""


@dataclass(frozen=True, slots=True)
class QueueOverview:
    """One queue as ``ferry jobs stats`` and the dashboard show it."""

    queue: str
    paused: bool
    counts: dict[JobState, int]
    depth: int
    """Runs waiting: queued plus sleeping."""
    completed_in_window: int
    window_ms: int

    @property
    def per_minute(self) -> float:
        """Completed runs per minute over the window."""
        return self.completed_in_window * 60_000 / self.window_ms

    def to_json(self) -> dict[str, Any]:
        """The row as the ``--json`` envelope carries it."""
        return {
            "queue": self.queue,
            "paused": self.paused,
            "counts": dict(self.counts),
            "depth": self.depth,
            "completed_in_window": self.completed_in_window,
            "per_minute": round(self.per_minute, 2),
        }


async def queue_overview(
    driver: JobDriver, *, window_ms: int = DEFAULT_WINDOW_MS
) -> list[QueueOverview]:
    """Every queue with runs or a pause, in name order."""
    stats = await driver.stats()
    completed = await need(
        driver, INTROSPECT, by="operator reads (ferry jobs, the dashboard, MCP)"
    ).throughput(driver.clock.now_ms() - window_ms)
    return [
        QueueOverview(
            queue=s.queue,
            paused=s.paused,
            counts=dict(s.counts),
            depth=s.counts.get("queued", 0) + s.counts.get("sleeping", 0),
            completed_in_window=completed.get(s.queue, 0),
            window_ms=window_ms,
        )
        for s in stats
    ]
