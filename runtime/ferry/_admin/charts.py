"""The dashboard's charts as geometry: the templates draw them as inline SVG.

Server-rendered on purpose: no script library, no CDN, nothing for the CSP to allow, and a
chart reads the same introspection as the tables beside it (``outcome_series`` and
``recent_latencies``). Every mark carries its numbers (``data-*`` and a ``<title>``
tooltip), so what the chart says can be read back and checked.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ferry._operations.filters import instant
from ferry.drivers.capabilities import INTROSPECT, need
from ferry.drivers.protocol import JobDriver, OutcomeBucket, RunLatency

CHART_WINDOW_MS = 60 * 60_000
BUCKET_MS = 60_000
"""An hour in one-minute buckets; the last bucket is the minute now falls in."""
RECENT_RUNS = 100

WIDTH = 360
HEIGHT = 72
LATENCY_WIDTH = 900
LATENCY_HEIGHT = 110
_TICKS_MS = (10, 1_000, 60_000, 3_600_000, 86_400_000)
"""Gridlines at 10 ms, 1 s, 1 min, 1 h and 1 d: far enough apart on the log scale to read."""
_BAR_GAP = 1


@dataclass(frozen=True, slots=True)
class Bar:
    """One bucket of a queue's chart: completed runs below, dead runs stacked on top."""

    start_ms: int
    completed: int
    dead: int
    x: float
    width: float
    completed_height: float
    dead_height: float

    @property
    def label(self) -> str:
        """The tooltip: when, and how many runs ended how."""
        return f"{instant(self.start_ms)}: {self.completed} completed, {self.dead} dead"


@dataclass(frozen=True, slots=True)
class QueueChart:
    """A queue's completed and dead runs per minute over the last hour."""

    queue: str
    bars: Sequence[Bar]
    completed: int
    dead: int
    peak: int
    """The tallest bucket (completed + dead): the chart's vertical scale."""


@dataclass(frozen=True, slots=True)
class LatencyPoint:
    """One recently ended run on the latency chart (oldest left, newest right)."""

    run: RunLatency
    x: float
    y: float

    @property
    def label(self) -> str:
        """The tooltip: which run, and its due-to-done latency."""
        r = self.run
        return f"run {r.id} ({r.name}, {r.queue}) {r.state} in {format_ms(r.latency_ms)}"


@dataclass(frozen=True, slots=True)
class LatencyChart:
    """The latency of the most recently ended runs, with its median and 95th percentile.

    The scale is logarithmic: one run that waited a day beside hundreds that took
    milliseconds must not flatten the rest onto the axis."""

    points: Sequence[LatencyPoint]
    peak_ms: int
    p50_ms: int | None
    p95_ms: int | None
    ticks: Sequence[tuple[float, str]]
    """Gridlines: ``(y, label)`` at the round latencies the scale spans."""
    width: int = LATENCY_WIDTH
    height: int = LATENCY_HEIGHT


@dataclass(frozen=True, slots=True)
class Charts:
    """Everything the jobs page draws."""

    since_ms: int
    until_ms: int
    queues: Sequence[QueueChart]
    latency: LatencyChart
    width: int = WIDTH
    height: int = HEIGHT


async def read_charts(driver: JobDriver, queues: Iterable[str]) -> Charts:
    """The last hour per queue (every queue in ``queues`` gets a chart, even an idle one)
    and the latency of the last ``RECENT_RUNS`` runs, read through the introspection."""
    now = driver.clock.now_ms()
    since = now - now % BUCKET_MS - CHART_WINDOW_MS + BUCKET_MS
    series = await need(driver, INTROSPECT, by="the dashboard's charts").outcome_series(
        since, BUCKET_MS
    )
    recent = await need(driver, INTROSPECT, by="the dashboard's charts").recent_latencies(
        RECENT_RUNS
    )
    names = sorted({*queues, *(bucket.queue for bucket in series)})
    return Charts(
        since_ms=since,
        until_ms=since + CHART_WINDOW_MS,
        queues=[queue_chart(name, series, since) for name in names],
        latency=latency_chart(recent),
    )


def queue_chart(queue: str, series: Iterable[OutcomeBucket], since_ms: int) -> QueueChart:
    """One queue's bars: a slot per minute of the hour, empty minutes drawn as nothing."""
    slots = CHART_WINDOW_MS // BUCKET_MS
    counts = {
        (b.start_ms - since_ms) // BUCKET_MS: b
        for b in series
        if b.queue == queue and 0 <= b.start_ms - since_ms < CHART_WINDOW_MS
    }
    peak = max((b.completed + b.dead for b in counts.values()), default=0)
    slot_width = WIDTH / slots
    bars = []
    for slot, bucket in sorted(counts.items()):
        scale = (HEIGHT - 2) / peak
        bars.append(
            Bar(
                start_ms=bucket.start_ms,
                completed=bucket.completed,
                dead=bucket.dead,
                x=round(slot * slot_width, 2),
                width=round(slot_width - _BAR_GAP, 2),
                completed_height=round(bucket.completed * scale, 2),
                dead_height=round(bucket.dead * scale, 2),
            )
        )
    return QueueChart(
        queue=queue,
        bars=bars,
        completed=sum(b.completed for b in bars),
        dead=sum(b.dead for b in bars),
        peak=peak,
    )


def latency_chart(recent: Sequence[RunLatency]) -> LatencyChart:
    """The recent runs oldest to newest, left to right, on a log latency scale."""
    runs = list(reversed(recent))
    peak = max((r.latency_ms for r in runs), default=0)
    step = LATENCY_WIDTH / max(len(runs), 1)
    points = [
        LatencyPoint(run=r, x=round(step * (i + 0.5), 2), y=_latency_y(r.latency_ms, peak))
        for i, r in enumerate(runs)
    ]
    ordered = sorted(r.latency_ms for r in runs)
    return LatencyChart(
        points=points,
        peak_ms=peak,
        p50_ms=_percentile(ordered, 0.50),
        p95_ms=_percentile(ordered, 0.95),
        ticks=[(_latency_y(ms, peak), format_ms(ms)) for ms in _TICKS_MS if ms <= max(peak, 1)],
    )


def _latency_y(ms: int, peak_ms: int) -> float:
    """Where ``ms`` sits on the log scale from 0 (bottom) to ``peak_ms`` (top)."""
    span = LATENCY_HEIGHT - 8
    share = math.log10(1 + ms) / math.log10(1 + peak_ms) if peak_ms > 0 else 0.0
    return round(LATENCY_HEIGHT - 4 - share * span, 2)


def _percentile(ordered: Sequence[int], fraction: float) -> int | None:
    """The nearest-rank percentile of sorted values (None for none)."""
    if not ordered:
        return None
    rank = max(1, -(-len(ordered) * fraction // 1))
    return ordered[int(rank) - 1]


def format_ms(ms: int) -> str:
    """A latency as people read it: ``850 ms``, ``4.2 s``, ``3.5 min``, ``2.0 h``."""
    if ms < 1_000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1_000:.1f} s"
    if ms < 3_600_000:
        return f"{ms / 60_000:.1f} min"
    return f"{ms / 3_600_000:.1f} h"
