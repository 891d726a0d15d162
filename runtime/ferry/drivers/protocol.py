"""The storage seam: ``JobDriver`` and the values that cross it.

Nothing outside ``ferry.drivers`` knows how jobs are stored. The facade enqueues through
this protocol, ``execute_job`` claims and settles through it, and every operator surface
reads ``introspect``. The Postgres and memory drivers implement all of it, and the
conformance suite in ``tests/conformance`` holds them to the same behaviour.

Attempt accounting lives in the driver so that a crash counts: ``claim`` increments the
attempt, and only the settles that must not count (``interrupted``, ``sleep``,
``deferred``) give it back. A worker killed mid-run never settles, its lease lapses,
and the next claim counts a new attempt — exactly the at-least-once contract.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from ferry._clock import Clock

JsonValue: TypeAlias = Any
"""A value with a JSON form (checked by ``ferry._payload``; ``Any`` for mypy's sake)."""

JobState = Literal["queued", "running", "sleeping", "completed", "dead", "cancelled"]
JOB_STATES: tuple[JobState, ...] = (
    "queued",
    "running",
    "sleeping",
    "completed",
    "dead",
    "cancelled",
)
NackOutcome = Literal["retry", "dead", "interrupted", "sleep", "deferred", "cancelled"]


@dataclass(frozen=True, slots=True)
class JobError:
    """The error a failed attempt left on its run."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Progress:
    """``progress(current, total)`` as last reported by the body."""

    current: int
    total: int


@dataclass(frozen=True, slots=True)
class EnqueueRequest:
    """One job row to write. ``run_at_ms`` ``None`` means now on the driver's clock."""

    name: str
    queue: str
    payload: JsonValue
    idempotency_key: str
    max_attempts: int
    run_at_ms: int | None = None
    tenant: str | None = None
    actor: str | None = None
    concurrency_key: str | None = None
    priority: int = 0
    connection: Any = None
    """A transaction to join (an asyncpg connection for Postgres); ``None``: the driver's own."""


@dataclass(frozen=True, slots=True)
class EnqueueResult:
    """The run an enqueue resolved to; ``deduplicated`` when the key already had one."""

    job_id: str
    deduplicated: bool


@dataclass(frozen=True, slots=True)
class ClaimOptions:
    """Who claims, from which queues, which jobs it can run, how many, for how long."""

    worker_id: str
    lease_ms: int
    limit: int = 1
    queues: Sequence[str] | None = None
    names: Sequence[str] | None = None
    """Only jobs this worker has declared; ``None`` claims any name."""


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    """A run leased to one worker until ``lease_expires_at_ms``; ``attempt`` is 1-based."""

    id: str
    name: str
    queue: str
    payload: JsonValue
    idempotency_key: str
    attempt: int
    max_attempts: int
    tenant: str | None
    actor: str | None
    concurrency_key: str | None
    run_at_ms: int
    created_at_ms: int
    lease_expires_at_ms: int
    slot_held: bool = False
    """The claim already took the run's concurrency slot (so execution need not)."""


@dataclass(frozen=True, slots=True)
class AckOptions:
    """A completed attempt: fenced on ``worker_id``."""

    worker_id: str
    result: JsonValue = None
    duration_ms: int | None = None
    progress: Progress | None = None


@dataclass(frozen=True, slots=True)
class NackOptions:
    """An attempt that did not complete, and what becomes of the run.

    ``retry`` and ``dead`` keep the attempt counted; ``interrupted`` (drain), ``sleep``
    (``step.sleep``) and ``deferred`` (a busy concurrency slot) give it back.
    ``run_at_ms`` is when the run may be claimed again (``None``: at once).
    """

    worker_id: str
    outcome: NackOutcome
    run_at_ms: int | None = None
    error: JobError | None = None
    progress: Progress | None = None


@dataclass(frozen=True, slots=True)
class HeartbeatOptions:
    """Extend a held lease to now + ``lease_ms``; fenced on ``worker_id``."""

    worker_id: str
    lease_ms: int
    progress: Progress | None = None
    on_cancel_requested: Callable[[], None] | None = None
    """Called when the renewal finds that an operator asked to cancel the run. The lease is
    still renewed: the worker aborts the body and settles the run as ``cancelled`` itself."""


@dataclass(frozen=True, slots=True)
class QueueStats:
    """How many runs of one queue are in each state, and whether it is paused."""

    queue: str
    counts: Mapping[JobState, int]
    paused: bool = False
    oldest_due_at_ms: int | None = None
    """When the longest-waiting due run (queued, ``run_at`` at or before now) became due;
    None when none waits. Now minus this is the queue's age, what a backlog alert reads."""


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One completed step of a run: its result (``run``) or its wake instant (``sleep``)."""

    name: str
    kind: Literal["run", "sleep"]
    result: JsonValue
    started_at_ms: int
    finished_at_ms: int
    wake_at_ms: int | None = None


class StepStore(Protocol):
    """Memoized step results, stored beside the queue: one store, one transaction boundary."""

    async def load(self, job_id: str) -> Mapping[str, StepRecord]:
        """Every step the run has recorded, by name."""
        ...

    async def record(self, job_id: str, step: StepRecord, *, worker_id: str) -> bool:
        """Record a step if ``worker_id`` still holds the run; answers whether it landed."""
        ...


class LeaseStore(Protocol):
    """Fleet-wide concurrency slots: at most ``limit`` holders per key at once.

    A slot is held by a run id and is released by the driver in the same operation that
    settles that run, so a key with limit 1 runs back-to-back jobs at round-trip speed.
    """

    async def acquire(self, key: str, *, holder: str, limit: int, ttl_ms: int) -> bool:
        """Take one of ``limit`` slots of ``key`` for ``holder``; False when all are held."""
        ...

    async def release(self, key: str, *, holder: str) -> None:
        """Give back ``holder``'s slot of ``key`` (a no-op when it holds none)."""
        ...

    async def holders(self, key: str) -> Sequence[str]:
        """The run ids currently holding a slot of ``key`` (unexpired)."""
        ...


@dataclass(frozen=True, slots=True)
class RunFilter:
    """Which runs ``list_runs`` returns; ``before_id`` pages backwards (newest first)."""

    queue: str | None = None
    name: str | None = None
    state: JobState | None = None
    tenant: str | None = None
    created_after_ms: int | None = None
    created_before_ms: int | None = None
    limit: int = 50
    before_id: str | None = None
    lease_expired: bool = False
    """Only running runs whose lease has lapsed (on the driver's clock): stuck leases."""


@dataclass(frozen=True, slots=True)
class RunSummary:
    """A run as a list shows it."""

    id: str
    name: str
    queue: str
    state: JobState
    attempts: int
    max_attempts: int
    tenant: str | None
    run_at_ms: int
    created_at_ms: int
    updated_at_ms: int
    last_error: JobError | None


@dataclass(frozen=True, slots=True)
class RunDetail:
    """Everything known about one run: ``jobs show`` reads this."""

    summary: RunSummary
    payload: JsonValue
    idempotency_key: str
    actor: str | None
    concurrency_key: str | None
    locked_by: str | None
    lease_expires_at_ms: int | None
    result: JsonValue
    progress: Progress | None
    finished_at_ms: int | None
    steps: Sequence[StepRecord] = field(default_factory=tuple)
    cancel_requested_at_ms: int | None = None
    """When an operator asked to cancel this run while it was running (else None)."""


@dataclass(frozen=True, slots=True)
class OutcomeBucket:
    """How many runs of one queue ended in one time bucket, by how they ended."""

    queue: str
    start_ms: int
    """The bucket covers ``[start_ms, start_ms + bucket_ms)``."""
    completed: int
    dead: int


@dataclass(frozen=True, slots=True)
class RunLatency:
    """One run that ended recently, and how long it took from due to done."""

    id: str
    queue: str
    name: str
    state: Literal["completed", "dead"]
    finished_at_ms: int
    latency_ms: int
    """``finished_at_ms - run_at_ms`` (never below 0): the wait in the queue since the run
    last became due, plus its last attempt."""


class JobIntrospection(Protocol):
    """Every operator capability; the CLI and the dashboard read nothing else."""

    async def list_runs(self, run_filter: RunFilter) -> Sequence[RunSummary]:
        """Runs matching the filter, newest first, at most ``limit``."""
        ...

    async def get_run(self, job_id: str) -> RunDetail | None:
        """One run with its steps, or None."""
        ...

    async def retry_run(self, job_id: str) -> None:
        """Put a dead or cancelled run back to queued with fresh attempts (X_RUN_STATE else)."""
        ...

    async def cancel_run(self, job_id: str) -> JobState:
        """Cancel a queued or sleeping run; answers the state it ended in.

        A running run cannot be settled from outside its worker (the settle is fenced on
        the lease holder), so its cancel is recorded and answered ``"running"``: the
        worker's next heartbeat learns of it, aborts the body with ``X_CANCELLED`` and
        settles the run as ``cancelled``.
        """
        ...

    async def throughput(self, since_ms: int) -> Mapping[str, int]:
        """Runs completed per queue since ``since_ms`` (queues with none are absent)."""
        ...

    async def outcome_series(self, since_ms: int, bucket_ms: int) -> Sequence[OutcomeBucket]:
        """Runs that ended ``completed`` or ``dead`` at or after ``since_ms``, counted per
        queue and bucket: bucket ``k`` starts at ``since_ms + k * bucket_ms`` and holds the
        runs with ``start <= finished_at_ms < start + bucket_ms``. Only buckets holding a
        run are returned, ordered by queue, then start. ``bucket_ms`` is positive."""
        ...

    async def recent_latencies(self, limit: int) -> Sequence[RunLatency]:
        """The ``limit`` runs that most recently ended ``completed`` or ``dead``, newest
        ``finished_at_ms`` first (ties: the later-enqueued run first)."""
        ...

    async def revoke_session(self, session: str, *, until_ms: int) -> None:
        """Refuse dashboard session ``session`` until ``until_ms`` (when its cookie lapses
        anyway), for every process sharing this storage; forget lapsed revocations."""
        ...

    async def session_revoked(self, session: str) -> bool:
        """Whether ``session`` is revoked and the revocation has not lapsed (driver clock)."""
        ...

    async def pause_queue(self, queue: str) -> None:
        """Stop claims from ``queue`` until resumed (enqueue still works)."""
        ...

    async def resume_queue(self, queue: str) -> None:
        """Let claims from ``queue`` proceed again."""
        ...


@dataclass(frozen=True, slots=True)
class BackfillCheckpoint:
    """How far one backfill has got: the cursor of its next page and what is done."""

    key: str
    cursor: JsonValue
    """Where the next page starts; ``None`` before the first page."""
    processed: int
    pages: int
    done: bool
    updated_at_ms: int


class BackfillLedger(Protocol):
    """The checkpoints of ``backfill()`` runs, one per backfill key, beside the queue."""

    async def load(self, key: str) -> BackfillCheckpoint | None:
        """The last checkpoint saved under ``key``, or None before the first page."""
        ...

    async def save(self, checkpoint: BackfillCheckpoint, *, job_id: str, worker_id: str) -> bool:
        """Save ``checkpoint`` if ``worker_id`` still holds run ``job_id``; answers whether
        it landed (fenced like a step, so a worker that lost its lease cannot rewind it)."""
        ...


class QueueWake(Protocol):
    """Wakes an idle worker when a run is enqueued, instead of waiting for the next poll."""

    @property
    def healthy(self) -> bool:
        """True while wake-ups are known to arrive (the poll can then be lazier)."""
        ...

    @property
    def idle_poll_ms(self) -> int:
        """How long an idle worker may wait before it polls anyway."""
        ...

    async def wait(self, timeout_ms: int) -> bool:
        """True when woken by an enqueue, False when ``timeout_ms`` passed first."""
        ...

    async def close(self) -> None:
        """Stop listening."""
        ...


@runtime_checkable
class JobDriver(Protocol):
    """The one interface to job storage. Job code never changes when it does."""

    @property
    def name(self) -> str:
        """A short name for logs and ``describe`` (``"postgres"``, ``"memory"``)."""
        ...

    @property
    def clock(self) -> Clock:
        """The clock whose now every ``run_at`` and lease is measured on."""
        ...

    @property
    def steps(self) -> StepStore:
        """Step persistence, beside the queue."""
        ...

    @property
    def backfills(self) -> BackfillLedger | None:
        """Backfill checkpoints; ``None`` runs a backfill with no bookkeeping."""
        ...

    @property
    def leases(self) -> LeaseStore | None:
        """Fleet-wide concurrency slots; ``None`` refuses jobs that declare concurrency."""
        ...

    @property
    def introspect(self) -> JobIntrospection:
        """Operator capabilities."""
        ...

    def wake(self) -> QueueWake:
        """This process's one wake-up source for idle workers."""
        ...

    async def enqueue(self, request: EnqueueRequest) -> EnqueueResult:
        """Write one run, or resolve to the run that already holds its idempotency key."""
        ...

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        """Write many runs in one round trip; results in request order."""
        ...

    async def claim(self, options: ClaimOptions) -> list[ClaimedJob]:
        """Lease up to ``limit`` due runs (or runs whose lease expired), counting an attempt."""
        ...

    async def ack(self, job_id: str, options: AckOptions) -> bool:
        """Complete a run if ``options.worker_id`` still holds it; answers whether it landed."""
        ...

    async def nack(self, job_id: str, options: NackOptions) -> bool:
        """Settle an attempt that did not complete, fenced like ``ack``."""
        ...

    async def heartbeat(self, job_id: str, options: HeartbeatOptions) -> bool:
        """Extend the lease, fenced like ``ack``; False when the run is no longer ours."""
        ...

    async def stats(self) -> list[QueueStats]:
        """Counts per queue and state."""
        ...

    async def close(self) -> None:
        """Hand back what the driver owns (pools, listeners); borrowed ones stay open."""
        ...
