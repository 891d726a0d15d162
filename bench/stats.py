"""Percentiles and rates as the table prints them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Percentiles:
    """p50/p95/p99 of a sample, in milliseconds."""

    p50: float
    p95: float
    p99: float
    samples: int


def percentiles(values_ms: Sequence[float]) -> Percentiles:
    """Nearest-rank percentiles of ``values_ms``."""
    if not values_ms:
        raise ValueError("no samples were measured, so there are no percentiles")
    ordered = sorted(values_ms)

    def rank(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]

    return Percentiles(rank(50), rank(95), rank(99), len(ordered))


@dataclass(frozen=True)
class Rate:
    """A throughput; ``complete`` is False when the workload hit its time bound first."""

    per_second: float
    complete: bool = True
    cpu_us: float | None = None
    """CPU time the worker process(es) spent per job, in microseconds (drains only)."""


def drain_rate(jobs: int, seconds: float, cpu_seconds: float, complete: bool) -> Rate:
    """A drain's throughput and the worker CPU it cost per job."""
    return Rate(
        jobs / seconds if seconds > 0 else 0.0,
        complete,
        cpu_seconds / jobs * 1e6 if jobs else None,
    )


@dataclass(frozen=True)
class Soak:
    """A worker's resident memory after a warm-up number of runs and after many more."""

    warm_runs: int
    warm_rss: int
    runs: int
    rss: int
    rate: Rate

    @property
    def growth(self) -> float:
        """RSS after ``runs`` relative to RSS after ``warm_runs`` (0.05: 5 % more)."""
        return self.rss / self.warm_rss - 1

    @property
    def bytes_per_run(self) -> float:
        """RSS gained per run between the two samples."""
        return (self.rss - self.warm_rss) / (self.runs - self.warm_runs)


def best_rate(rates: Sequence[Rate]) -> Rate:
    """The fastest of repeated runs: load from elsewhere only ever slows a run down."""
    return max(rates, key=lambda r: r.per_second)
