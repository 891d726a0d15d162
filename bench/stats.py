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


def best_rate(rates: Sequence[Rate]) -> Rate:
    """The fastest of repeated runs: load from elsewhere only ever slows a run down."""
    return max(rates, key=lambda r: r.per_second)
