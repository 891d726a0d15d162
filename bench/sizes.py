"""How big each workload is: the full run and the ``--quick`` smoke check."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sizes:
    """Counts and time bounds of every workload."""

    single: int
    """(a) jobs enqueued one per round trip."""
    batch_total: int
    """(a) jobs enqueued through the batch API ..."""
    batch: int
    """... in batches of this many."""
    enqueue_runs: int
    """(a) runs of both enqueue workloads per system (the fastest is reported)."""
    end_to_end: int
    """(b) jobs pre-filled and drained by one worker process."""
    concurrencies: tuple[int, ...]
    """(b) the worker concurrencies measured."""
    end_to_end_runs: int
    """(b) drains per system and setting (the fastest is reported)."""
    pgqueuer_big_batch: int
    """(b) pgqueuer also runs at this batch size (default 10) with no concurrency limit."""
    ferry_best_concurrency: int
    """(b) ferry also runs at this concurrency: the size of its claim batches at full speed."""
    shared_processes: tuple[int, ...]
    """(b) how many worker processes drain one queue together, one drain per count ..."""
    shared_concurrency: int
    """... each at this concurrency."""
    soak_warm_runs: int
    """(e) runs after which a soaking worker's RSS is first sampled ..."""
    soak_runs: int
    """... and the runs after which it is sampled again."""
    soak_systems: tuple[str, ...]
    """(e) the systems soaked (one too slow to run ``soak_runs`` in minutes is left out)."""
    soak_timeout_s: float
    """(e) a soak stops after this long."""
    reference_rows: int
    """(f) rows the raw asyncpg loop claims and settles ..."""
    reference_batch: int
    """... this many per claim."""
    latency_samples: int
    """(c) jobs enqueued one by one on an idle worker ..."""
    latency_rate: float
    """... at this many per second."""
    retained: int
    """(d) completed rows inserted before the second claim-latency measurement."""
    claim_samples: int
    """(d) timed claim+ack rounds per table state."""
    claim_batch: int
    """(d) jobs per claim+ack round."""
    drain_timeout_s: float
    """(b) a drain stops after this long and reports what it finished."""
    pinned_rate: float
    """(g) jobs enqueued per second while a snapshot pins the xmin horizon ..."""
    pinned_warm_s: float
    """... first for this long unpinned ..."""
    pinned_s: float
    """... then for this long pinned ..."""
    pinned_after_s: float
    """... then for this long after the release."""
    pinned_systems: tuple[str, ...]
    """(g) the systems run under the pin."""
    fan_out_children: int
    """(h) children of the one parent fanning out, end to end."""
    result_samples: int
    """(i) result waits timed, one run at a time."""


FULL = Sizes(
    single=2_000,
    batch_total=20_000,
    batch=1_000,
    enqueue_runs=3,
    end_to_end=20_000,
    concurrencies=(1, 32),
    end_to_end_runs=2,
    pgqueuer_big_batch=100,
    ferry_best_concurrency=100,
    shared_processes=(1, 2, 4),
    shared_concurrency=32,
    soak_warm_runs=10_000,
    soak_runs=200_000,
    soak_systems=("ferry", "pgqueuer"),
    soak_timeout_s=300.0,
    reference_rows=20_000,
    reference_batch=100,
    latency_samples=600,
    latency_rate=50.0,
    retained=1_000_000,
    claim_samples=300,
    claim_batch=100,
    drain_timeout_s=45.0,
    pinned_rate=300.0,
    pinned_warm_s=30.0,
    pinned_s=300.0,
    pinned_after_s=60.0,
    pinned_systems=("ferry", "pgqueuer"),
    fan_out_children=10_000,
    result_samples=300,
)

QUICK = Sizes(
    single=200,
    batch_total=2_000,
    batch=500,
    enqueue_runs=1,
    end_to_end=2_000,
    concurrencies=(1, 32),
    end_to_end_runs=1,
    pgqueuer_big_batch=100,
    ferry_best_concurrency=100,
    shared_processes=(1, 2, 4),
    shared_concurrency=32,
    soak_warm_runs=2_000,
    soak_runs=20_000,
    soak_systems=("ferry", "pgqueuer"),
    soak_timeout_s=120.0,
    reference_rows=2_000,
    reference_batch=100,
    latency_samples=100,
    latency_rate=50.0,
    retained=50_000,
    claim_samples=20,
    claim_batch=100,
    drain_timeout_s=20.0,
    pinned_rate=100.0,
    pinned_warm_s=6.0,
    pinned_s=15.0,
    pinned_after_s=5.0,
    pinned_systems=("ferry", "pgqueuer"),
    fan_out_children=1_000,
    result_samples=50,
)
