"""Queues: depth, state counts and throughput per queue; pause and resume."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ferry._duration import to_ms
from ferry._names import check_name
from ferry._operations.envelope import Action
from ferry._operations.runs import introspection
from ferry.drivers.protocol import JobDriver, JobState
from ferry.errors import FerryError

DEFAULT_WINDOW_MS = 5 * 60_000
"""Throughput is measured over the last five minutes unless asked otherwise."""
MAX_WINDOW_MS = 366 * 86_400_000
"""The longest throughput window: a year (and a day). Completed runs older than that are
rarely still kept (retention), and the count is one query over the finished runs."""


def stats_window_ms(text: str | None) -> int:
    """A throughput window as typed (``"5m"``, ``"1h"``; none: five minutes), from 1 ms to
    ``MAX_WINDOW_MS``; ``X_OUT_OF_RANGE`` outside that."""
    if text is None:
        return DEFAULT_WINDOW_MS
    window_ms = to_ms(text, what="window")
    if not 1 <= window_ms <= MAX_WINDOW_MS:
        raise FerryError(
            "X_OUT_OF_RANGE",
            f"window {text[:40]!r} is {window_ms} ms, not a window from 1 ms to 366 days",
            'measure throughput over a window such as "5m", "1h" or "7d"',
        )
    return window_ms


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
        """The row as the ``--json`` envelope carries it (``completedInWindow``,
        ``perMinute``; the state names inside ``counts`` are values, not keys to recase)."""
        return {
            "queue": self.queue,
            "paused": self.paused,
            "counts": dict(self.counts),
            "depth": self.depth,
            "completedInWindow": self.completed_in_window,
            "perMinute": round(self.per_minute, 2),
        }


async def queue_overview(
    driver: JobDriver, *, window_ms: int = DEFAULT_WINDOW_MS
) -> list[QueueOverview]:
    """Every queue with runs or a pause, in name order."""
    stats = await driver.stats()
    completed = await introspection(driver).throughput(driver.clock.now_ms() - window_ms)
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


async def queue_stats(driver: JobDriver, window_ms: int) -> list[QueueOverview]:
    """Depth, state counts and throughput per queue over ``window_ms``."""
    return await queue_overview(driver, window_ms=window_ms)


def stats_summary(queues: Sequence[QueueOverview]) -> str:
    """``jobs stats``' summary line."""
    return f"{len(queues)} queue(s)"


def stats_json(window_ms: int, queues: Sequence[QueueOverview]) -> dict[str, Any]:
    """``ferry jobs stats --json``'s data."""
    return {"windowMs": window_ms, "queues": [q.to_json() for q in queues]}


async def set_queue_paused(
    driver: JobDriver, queue: str, *, paused: bool, create: bool = False
) -> Action:
    """Pause (stop claims) or resume one queue; a name no queue can have is refused first.

    Pausing a queue no run has ever named, and no pause either, is refused unless
    ``create`` says it is meant (``X_QUEUE_UNKNOWN``): a typo would otherwise pause a queue
    nothing uses and leave the real one running, with a phantom queue on every page."""
    check_name(queue, what="queue")
    if paused and not create:
        known = {s.queue for s in await driver.stats()}
        if queue not in known:
            raise FerryError(
                "X_QUEUE_UNKNOWN",
                f'no run has ever been on queue "{queue[:80]}", so pausing it would create it '
                f"(the queues there are: {', '.join(sorted(known)[:20]) or 'none'})",
                "check the name with `ferry jobs stats`; to pause a queue before its first "
                "run, pass --create",
            )
    if paused:
        await introspection(driver).pause_queue(queue)
        summary = f'queue "{queue}" is paused: its runs stay queued until it is resumed'
    else:
        await introspection(driver).resume_queue(queue)
        summary = f'queue "{queue}" is resumed'
    return Action(
        summary,
        {"queue": queue, "paused": paused},
        "queue-paused" if paused else "queue-resumed",
    )
