"""The storage seam: the core every driver offers, the capabilities it may declare, and
the values that cross.

The core (``JobDriver``) is what it takes to run jobs: enqueue (one, many, idempotent),
the batched claim / settle / renewal path, steps, the wake, stats, retention, the
migration ledger, open and close. Everything else is a capability a driver declares by
offering an attribute of its name (``ferry.drivers.capabilities``): fleet ``slots``,
``rates`` windows, fenced ``leases``, keyed ``records`` and logs, the ``outbox``, run
``transfer``, operator ``introspect``ion, run ``results`` and ``children`` (fan-out and
fan-in). What stands on a primitive — the scheduler's leadership and ticks, the
maintenance slot, paused tasks, dashboard sessions, the webhook and backfill ledgers, a
run's result and a parent's wait for its children — is written once above the drivers. A
driver opens one pool and one LISTEN session (where its store has one); nothing outside
``ferry.drivers`` opens a database.
``tests/conformance`` runs every behaviour — the worker's real claim and settle path
included — on each driver.

Attempt accounting lives in the driver so that a crash counts: ``claim`` increments the
attempt, and only the settles ``ferry.drivers.settle`` names as uncounted (``interrupted``,
``sleep``, ``deferred``) give it back. A worker killed mid-run never settles, its lease
lapses, and the next claim counts a new attempt — exactly the at-least-once contract.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeAlias, runtime_checkable

from typing_extensions import TypeVar

from ferry._clock import Clock
from ferry._duration import Duration
from ferry._payload import JsonValue as JsonValue  # the values that cross the seam
from ferry._storable import MAX_KEY_BYTES
from ferry.drivers._ledger import LedgerState, Migration
from ferry.drivers.failures import AttemptFailure
from ferry.drivers.rates import RateWindow
from ferry.errors import FerryError

JobState = Literal["queued", "running", "sleeping", "completed", "dead", "cancelled", "moving"]
JOB_STATES: tuple[JobState, ...] = (
    "queued",
    "running",
    "sleeping",
    "completed",
    "dead",
    "cancelled",
    "moving",
)
"""Every state a run can be in. ``moving``: reserved by ``ferry jobs drain`` on its way to
another store (``RunTransfer``): no worker claims it, and only a drain finishes it."""
NackOutcome = Literal["retry", "dead", "interrupted", "sleep", "deferred", "cancelled"]
ENDED_STATES: frozenset[JobState] = frozenset({"completed", "dead", "cancelled"})
"""The states a run ends in: it settles into one of them and never leaves it on its own
(an operator's retry puts a dead or cancelled run back)."""

ResultT_co = TypeVar("ResultT_co", covariant=True, default=Any)
"""What a run's body returns; unknown (``Any``) where a driver answers."""


# --- values: runs -----------------------------------------------------------------------


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
class Dedupe:
    """Which stored run of its key an enqueue is deduplicated against (``@job(dedupe=)``).

    The default dedupes against any run still stored. ``active_only``: only against a run
    not yet ended (not completed, dead or cancelled); ``window_ms``: only against one
    created less than ``window_ms`` before now, on the driver's clock. A stored run outside
    the rule keeps its row but gives its key up, in the enqueue's own transaction (or
    script): its key is rewritten to ``<key> [superseded: run <id>]``, padded with spaces
    to ``SUPERSEDED_KEY_BYTES`` — a form no enqueued key can take, unique per run, that
    still shows the original key in ``jobs show`` — and the new run is written with the key.
    """

    active_only: bool = False
    window_ms: int | None = None

    @property
    def retained(self) -> bool:
        """Dedupes against every stored run: no run is ever moved aside."""
        return not self.active_only and self.window_ms is None


RETAINED = Dedupe()
"""The default rule: dedupe against every stored run of the key."""

SUPERSEDED_KEY_BYTES = MAX_KEY_BYTES + 1
"""A superseded run's key is padded to at least this many bytes of UTF-8: one over the
longest key an enqueue accepts."""


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
    rate_key: str | None = None
    """The key the run's starts count under when its job declares a ``RateLimit``
    (``<job>`` or ``<job>:<key>``); ``None``: not rate limited."""
    connection: Any = None
    """A transaction to join (an asyncpg connection for Postgres, an aiosqlite one for
    SQLite); ``None``: the driver's own."""
    payload_json: str | None = None
    """``payload`` as JSON text, serialised once by the enqueue facade after its checks; a
    driver that stores text stores this (``None``: serialise ``payload`` itself)."""
    traceparent: str | None = None
    """The W3C trace context of the span the enqueue was made under (``None``: none), which
    the run's execution span continues (``ferry._tracecontext``)."""
    dedupe: Dedupe = RETAINED
    """Which stored run of the key this enqueue dedupes against (the job's ``dedupe=``)."""


class ResultSource(Protocol[ResultT_co]):
    """Where an ``EnqueueResult`` reads its run's status and result from: the job handle
    that enqueued it (``ferry._jobs.declaration.JobHandle``)."""

    # A wait measured on the driver's clock, not asyncio's: no asyncio.timeout can stand in.
    async def result(self, job_id: str, *, timeout: Duration = ...) -> ResultT_co: ...  # noqa: ASYNC109

    async def status(self, job_id: str) -> RunStatus: ...


@dataclass(frozen=True, slots=True)
class EnqueueResult(Generic[ResultT_co]):
    """The run an enqueue resolved to; ``deduplicated`` when the key already had one.

    An enqueue through a job handle carries the handle (``source``), so the run's result
    and status are one call away: ``await (await job.enqueue(...)).result(timeout="30s")``.
    A driver answers without it (it knows no job types)."""

    job_id: str
    deduplicated: bool
    source: ResultSource[ResultT_co] | None = field(default=None, compare=False, repr=False)

    async def result(self, *, timeout: Duration = "30s") -> ResultT_co:  # noqa: ASYNC109
        """The run's result once it completed, typed from its body's return annotation
        (``JobHandle.result``: the refusals for a dead, cancelled or slow run)."""
        return await self._source().result(self.job_id, timeout=timeout)

    async def status(self) -> RunStatus:
        """Where the run stands now (``JobHandle.status``)."""
        return await self._source().status(self.job_id)

    def _source(self) -> ResultSource[ResultT_co]:
        if self.source is None:
            raise FerryError(
                "X_INVARIANT",
                f"enqueue result of run {self.job_id} carries no job to read its result "
                "through (it came from a driver, not a job handle)",
                f"call <job>.result({self.job_id!r}) or <job>.status({self.job_id!r}) on the "
                "job's handle",
            )
        return self.source


@dataclass(frozen=True, slots=True)
class ClaimOptions:
    """Who claims, from which queues, which jobs it can run, how many, for how long."""

    worker_id: str
    lease_ms: int
    limit: int = 1
    queues: Sequence[str] | None = None
    names: Sequence[str] | None = None
    """Only jobs this worker has declared; ``None`` claims any name."""
    limits: Mapping[str, int] = field(default_factory=dict)
    """Job name -> fleet-wide concurrency limit per key, for jobs that wait when busy.

    The claim takes each such run's slot of its ``concurrency_key`` (``ClaimedJob.slot_held``)
    and skips runs whose key is full, instead of claiming them only to defer them: a
    limit-1 key then runs back to back at round-trip speed. A driver without ``slots``
    ignores it (and the worker refuses such jobs before claiming)."""
    rates: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """Job name -> ``(limit, per_ms)`` of its ``RateLimit``, for the jobs this worker runs
    that declare one. The claim applies ``ferry.drivers.rates`` to each such run with a
    ``rate_key``: it leases the runs whose key has room and defers the others (answered
    with ``ClaimedJob.rate_deferred_until_ms`` set: not leased, not to be run). A driver
    without ``rates`` is refused before it is asked (``X_DRIVER_CAPABILITY``)."""


@dataclass(slots=True)
class ClaimedJob:
    """A run leased to one worker until ``lease_expires_at_ms``; ``attempt`` is 1-based.

    One is built per claimed run on the worker's hot path, so it is a plain slotted
    dataclass (a frozen one pays an ``object.__setattr__`` per field), and it carries the
    payload as the JSON text every store keeps: the worker validates that text itself
    (pydantic's ``model_validate_json``), and ``payload`` decodes it only when something
    reads it.
    """

    id: str
    name: str
    queue: str
    payload_json: str
    """The run's input as stored: JSON text."""
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
    traceparent: str | None = None
    """The trace context it was enqueued under, which its execution span continues."""
    rate_deferred_until_ms: int | None = None
    """Set when the claim did *not* lease the run: its rate limit had no room, so the run
    is queued again, due at this instant (no attempt counted). The worker counts it
    (``job_rate_limited_total``) and wakes for it then; it never runs it."""

    @property
    def payload(self) -> JsonValue:
        """The run's input, decoded from ``payload_json``."""
        return json.loads(self.payload_json)


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

    ``ferry.drivers.settle`` maps ``outcome`` to the run's next state and says which
    outcomes give the attempt back. ``run_at_ms`` is when the run may be claimed again
    (``None``: at once).
    """

    worker_id: str
    outcome: NackOutcome
    run_at_ms: int | None = None
    error: JobError | None = None
    progress: Progress | None = None
    failure: str | None = None
    """A failed attempt's record (``ferry.drivers.failures.failure_record``): the settle
    appends it to the run's failures, of which the store keeps the newest 16 kB."""


Settle: TypeAlias = tuple[str, AckOptions | NackOptions]
"""One attempt's verdict on one run: ``(job_id, ack or nack)``."""


@dataclass(frozen=True, slots=True)
class HeartbeatOptions:
    """Extend a held lease to now + ``lease_ms``; fenced on ``worker_id``."""

    worker_id: str
    lease_ms: int
    progress: Progress | None = None
    on_cancel_requested: Callable[[], None] | None = None
    """Called (by ``heartbeat``) when the renewal finds that an operator asked to cancel the
    run. The lease is still renewed: the worker aborts the body and settles it ``cancelled``."""


Renewal: TypeAlias = tuple[str, HeartbeatOptions]
"""One lease renewal: ``(job_id, options)``."""


@dataclass(frozen=True, slots=True)
class RenewalAnswer:
    """Whether a renewal landed, and whether an operator asked to cancel the run."""

    landed: bool
    cancel_requested: bool = False


@dataclass(frozen=True, slots=True)
class QueueStats:
    """How many runs of one queue are in each state, and whether it is paused."""

    queue: str
    counts: Mapping[JobState, int]
    paused: bool = False
    oldest_due_at_ms: int | None = None
    """When the longest-waiting due run (queued, ``run_at`` at or before now) became due;
    None when none waits. Now minus this is the queue's age, what a backlog alert reads."""
    due: int = 0
    """Runs waiting for a worker now: queued or sleeping, ``run_at`` at or before now. With
    the running ones, what keeps the queue's workers busy (``job_queue_backlog``, what the
    Kubernetes operator scales workers on); a run due later is not counted."""


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One completed step of a run: its result (``run``) or its wake instant (``sleep``)."""

    name: str
    kind: Literal["run", "sleep"]
    result: JsonValue
    started_at_ms: int
    finished_at_ms: int
    wake_at_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """What ``prune`` may delete: rows finished longer ago than each retention.

    ``None`` keeps that kind forever. Dead runs have their own (longer) retention because
    dead letters are for people to read and retry.
    """

    completed_ms: int | None
    """Completed and cancelled runs, measured from ``finished_at``."""
    dead_ms: int | None
    """Dead runs, measured from ``finished_at``."""
    published_outbox_ms: int | None
    """Published outbox entries, measured from ``published_at``."""
    webhook_attempts_ms: int | None = None
    """Log entries (``RecordStore.append``: the webhook ledger's attempts), measured from
    their stamp. Expired records go whatever the policy."""
    batch: int = 1_000
    """Rows per delete statement: short transactions, short locks."""


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What one ``prune`` removed."""

    completed: int = 0
    """Completed and cancelled runs (with their steps)."""
    dead: int = 0
    slots: int = 0
    """Expired concurrency slots."""
    outbox: int = 0
    """Published outbox entries."""
    webhook_attempts: int = 0
    """Log entries (the webhook ledger's attempts)."""
    records: int = 0
    """Expired records (revoked sessions that lapsed)."""
    rates: int = 0
    """Rate windows whose every start and booking had left them."""


# --- values: introspection --------------------------------------------------------------


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
    after_id: str | None = None
    """Only runs with a larger id: the floor of a bounded search window."""
    key_prefix: str | None = None
    """Only runs whose idempotency key starts with this (code point by code point)."""
    error_code: str | None = None
    """Only runs whose last error has this code."""
    error_text: str | None = None
    """Only runs whose last error message contains this, ASCII letters in either case."""
    input_contains: str | None = None
    """JSON text: only runs whose input contains it, as PostgreSQL's ``jsonb @>`` says
    (``ferry.drivers._containment``)."""
    due_after_ms: int | None = None
    """Only runs next due after this instant (``run_at_ms`` greater)."""
    has_error: bool | None = None
    """Only runs with (True) or without (False) a last error."""


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
class RunStatus:
    """Where one run stands: what ``handle.status``, ``handle.result`` and ``step.wait``
    read (capability ``results``)."""

    id: str
    name: str
    state: JobState
    attempts: int
    max_attempts: int
    progress: Progress | None
    result: JsonValue
    """What the body returned, as stored (JSON); None until the run completed."""
    last_error: JobError | None
    finished_at_ms: int | None
    parent_id: str | None = None
    """The run that enqueued this one with ``step.enqueue``, if any."""

    @property
    def ended(self) -> bool:
        """The run settled for good: completed, dead or cancelled."""
        return self.state in ENDED_STATES


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
    parent_id: str | None = None
    """The run that enqueued this one with ``step.enqueue`` (its fan-out), if any."""
    children_pending: int = 0
    """How many of the runs it enqueued with ``step.enqueue`` have not ended yet."""
    children_count: int = 0
    """How many runs it enqueued with ``step.enqueue`` in all."""
    children: Sequence[RunSummary] = field(default_factory=tuple)
    """The first of them, oldest first (at most ``CHILDREN_SHOWN``)."""
    failures: Sequence[AttemptFailure] = ()
    """Its failed attempts, oldest first: code, instant and traceback of each, as many as
    the newest 16 kB of them hold (``ferry.drivers.failures``)."""
    traceparent: str | None = None
    """The W3C trace context it was enqueued under (the run page shows its trace id)."""
    rate_key: str | None = None
    """The key its starts count under, when its job declares a ``RateLimit``."""
    rate_deferred_until_ms: int | None = None
    """The instant a claim last deferred it to because its rate limit had no room (else
    None); the run is still waiting for it while it is queued with ``run_at`` equal to it."""


CHILDREN_SHOWN = 100
"""How many of a run's children ``get_run`` lists (``RunDetail.children_count`` has them
all): a fan-out of 10,000 stays one bounded read."""


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


# --- values: moving runs between stores -------------------------------------------------

MovableState = Literal["queued", "dead"]
"""The states a drain moves a run out of (and into, on the target)."""

ImportOutcome = Literal["imported", "present", "collision"]


@dataclass(frozen=True, slots=True)
class MovedRun:
    """One run as a drain carries it between stores: everything a faithful move keeps.

    The fields a run never changes after its enqueue — ``name``, ``queue``, ``payload``,
    ``created_at_ms`` (and the key) — are its identity across stores: ``import_runs`` calls
    a run already on the target with equal ones the same run.
    """

    id: str
    """Its id on the store it was reserved on (the target gives it its own)."""
    name: str
    queue: str
    payload: JsonValue
    idempotency_key: str
    state: MovableState
    """What it was before the reservation, and is on the target."""
    attempts: int
    max_attempts: int
    priority: int
    run_at_ms: int
    tenant: str | None
    actor: str | None
    concurrency_key: str | None
    last_error: JobError | None
    progress: Progress | None
    created_at_ms: int
    finished_at_ms: int | None
    """Set on a dead run (when it died); None on a queued one."""
    rate_key: str | None = None
    """The key its starts count under when its job declares a ``RateLimit``: on the
    target it waits for that key's window as it would have on the source."""
    steps: Sequence[StepRecord] = ()
    """Its completed steps in the order they ran: the target replays them, never reruns."""


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What became of one ``MovedRun`` on the target, and the target run holding its key.

    ``imported``: written now. ``present``: the same run (equal identity, see ``MovedRun``)
    was already there — an earlier, interrupted drain copied it. ``collision``: a different
    run holds the key (or a run that is itself ``moving`` off this store); nothing was
    written and the drain must not remove the source's run.
    """

    outcome: ImportOutcome
    job_id: str


# --- values: the outbox and the lease and record primitives ------------------------------


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """One committed side effect: its ``type`` (a job name for ``JobOutboxPublisher``) and
    its JSON ``payload``; ``attempts`` counts the claims, this one included."""

    id: str
    type: str
    payload: JsonValue
    attempts: int
    created_at_ms: int
    traceparent: str | None = None
    """The trace context it was appended under: the relay enqueues its run under it."""


@dataclass(frozen=True, slots=True)
class Lease:
    """A keyed, expiring lease as ``LeaseStore`` holds it: who holds ``name``, in which
    term, since when, and until when unless renewed.

    ``term`` is a fencing token: it grows every time the lease is taken (by another holder,
    or by the same one after it lapsed) and stays put while its holder renews it, so a write
    fenced on ``(name, holder, term)`` lands only within one unbroken tenure."""

    name: str
    holder: str
    term: int
    acquired_at_ms: int
    expires_at_ms: int


@dataclass(frozen=True, slots=True)
class RunFence:
    """A record write that lands only while ``worker_id`` holds run ``job_id`` (the fence a
    step record has): what a backfill checkpoint is saved under."""

    job_id: str
    worker_id: str


Fence: TypeAlias = Lease | RunFence
"""What a ``RecordStore.put`` is fenced on: an unexpired lease still in the given holder's
term, or a run still held by the given worker."""


def split_fence(fence: Fence | None) -> tuple[Lease | None, RunFence | None]:
    """``fence`` as the lease and the run a store's statement takes apart (at most one set)."""
    return (
        fence if isinstance(fence, Lease) else None,
        fence if isinstance(fence, RunFence) else None,
    )


@dataclass(frozen=True, slots=True)
class RecordWrite:
    """One unfenced record put that rides along with a worker's lease renewals
    (``heartbeat_many(..., record=)``): how a worker keeps its presence in the fleet
    registry (``ferry._fleet``) without a round trip of its own."""

    space: str
    key: str
    value: JsonValue
    expires_at_ms: int


# --- the stores a driver hands out ------------------------------------------------------


class QueueWake(Protocol):
    """Wakes an idle waiter when something is committed, instead of at its next poll.

    A run enqueued for later wakes waiters too, at the instant it falls due: a worker that
    sleeps until its idle poll would start a run due in 200 ms seconds late. A driver tells
    its waiters the soonest ``run_at`` of each enqueue that wrote runs for later (Postgres:
    in the enqueue's NOTIFY, payload ``<queue>@<run_at_ms>``; memory and SQLite: in
    process — another process's SQLite enqueue for later is found by the idle poll), and
    ``wait`` returns at it; ``ferry.drivers._wake.Arrivals`` implements both halves
    (``announce`` and ``expect``) over any clock. The worker adds the instants of its own
    nacks (a retry's backoff) itself. ``tests/conformance/test_worker.py`` checks it on
    every driver.
    """

    @property
    def healthy(self) -> bool:
        """True while wake-ups are known to arrive (the poll can then be lazier)."""
        ...

    @property
    def idle_poll_ms(self) -> int:
        """How long an idle waiter may wait before it polls anyway."""
        ...

    async def wait(self, timeout_ms: int) -> bool:
        """True when woken (or woken since the last wait) or when a run enqueued for later
        falls due, False when ``timeout_ms`` passed (on the driver's clock)."""
        ...


class StepStore(Protocol):
    """Memoized step results, stored beside the queue: one store, one transaction boundary."""

    async def load(self, job_id: str) -> Mapping[str, StepRecord]:
        """Every step the run has recorded, by name."""
        ...

    async def record(self, job_id: str, step: StepRecord, *, worker_id: str) -> bool:
        """Record a step if ``worker_id`` still holds the run; answers whether it held it.

        A step already recorded is kept (a replayed record is not an error), with one
        exception: a ``sleep`` record is replaced by a ``run`` record of its name — a
        ``step.wait`` parks on the record of its deadline and ends with its outcomes."""
        ...


class SlotStore(Protocol):
    """Fleet-wide concurrency slots (capability ``slots``): at most ``limit`` holders per
    key at once — what job concurrency and the worker's tenant/queue/total caps count on.

    A slot is held by a run id; the driver releases it in the same operation that settles
    that run and extends it with every renewal of the run's lease, so a key with limit 1
    runs back-to-back jobs at round-trip speed and a long run keeps its slot. This is the
    spec's ``LeaseStore``: a driver without it refuses every job that declares concurrency
    (``X_JOB_CONCURRENCY_UNENFORCEABLE``).
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


class RateBuckets(Protocol):
    """Fleet-wide rate windows (capability ``rates``): what ``RateLimit`` counts on.

    The claim itself applies the rule (``ferry.drivers.rates``) to the runs of the jobs in
    ``ClaimOptions.rates``, in the statement or script that leases them, so a run over its
    limit is never leased; this store is the window each key keeps, for reading. Windows
    whose every start and booking has left them are deleted by ``JobDriver.prune``."""

    async def window(self, key: str) -> RateWindow:
        """The key's logs as stored (an empty window for a key never started)."""
        ...


class LeaseStore(Protocol):
    """Keyed, expiring, fenced leases (capability ``leases``): the one primitive the
    scheduler's leadership and the maintenance slot stand on, and what tick records are
    fenced on (``ferry._lease``).

    A lease is a row (a hash on Redis) per name, never a session-scoped lock: a holder that
    stops renewing loses it by expiry, with nothing to clean up. Every instant is the
    caller's, read off the driver's clock.
    """

    async def acquire(self, name: str, holder: str, *, now_ms: int, ttl_ms: int) -> Lease | None:
        """Take ``name`` for ``holder`` until ``now_ms + ttl_ms`` if it is free or lapsed
        (a new term), or renew it if ``holder`` holds it unexpired (same term, same
        ``acquired_at_ms``); None when another holder has it. Of concurrent acquirers of a
        lapsed lease exactly one wins."""
        ...

    async def release(self, name: str, holder: str) -> None:
        """Lapse ``name`` now if ``holder`` holds it (a no-op otherwise), so another node
        takes it at its next bid instead of waiting out the expiry. The term is kept, so
        the next taker's is greater."""
        ...

    async def read(self, name: str, *, now_ms: int) -> Lease | None:
        """The lease if it is unexpired at ``now_ms``."""
        ...


class RecordStore(Protocol):
    """Keyed JSON records and keyed append-only logs (capability ``records``): the
    primitive the scheduler's tick and pause records, dashboard session revocations, the
    webhook ledger and backfill checkpoints are built on, once, above the drivers.

    Records live in named ``space``s, one value per key, optionally expiring; a ``put`` may
    be fenced (``Fence``) and then lands only if the fence holds in the same statement or
    script. A log is a sequence of JSON entries per ``(space, key)``, read newest first and
    pruned by age. Expired records and old log entries are deleted by ``JobDriver.prune``.
    """

    async def get(self, space: str, key: str, *, now_ms: int) -> JsonValue | None:
        """The value stored under ``key`` (None when there is none or it expired)."""
        ...

    async def scan(self, space: str, *, now_ms: int) -> Mapping[str, JsonValue]:
        """Every unexpired record of ``space``, by key."""
        ...

    async def put(
        self,
        space: str,
        key: str,
        value: JsonValue,
        *,
        now_ms: int,
        expires_at_ms: int | None = None,
        fence: Fence | None = None,
    ) -> bool:
        """Store ``value`` under ``key`` (replacing what was there) if ``fence`` holds at
        ``now_ms``; answers whether it landed (always, without a fence)."""
        ...

    async def delete(self, space: str, key: str) -> None:
        """Forget ``key`` (a no-op when it is not there)."""
        ...

    async def append(self, space: str, key: str, value: JsonValue, *, at_ms: int) -> None:
        """Add ``value`` to the log of ``(space, key)``, stamped ``at_ms`` for pruning."""
        ...

    async def tail(self, space: str, key: str, *, limit: int) -> Sequence[JsonValue]:
        """The newest ``limit`` entries of the log of ``(space, key)``, newest first."""
        ...


class SettleWatch(Protocol):
    """One waiter's watch over some runs' settling (``SettleNews.watch``): open before it
    first reads their state, so news that lands in between is not lost."""

    async def wait(self, timeout_ms: int) -> bool:
        """True once one of the watched runs may have ended since the last wait (news of
        it, or a reconnect after which nothing can be known), False when ``timeout_ms``
        passed first (on the driver's clock)."""
        ...

    def close(self) -> None:
        """Stop watching."""
        ...


class SettleNews(Protocol):
    """News of runs ending, for waiters on their results: Postgres NOTIFY on the ended
    channel from the settling statement, Redis pub/sub from the settling script, SQLite
    this process's own settles at once and other processes' commits by its watcher.

    An accelerator like the queue's wake, never the only path: a waiter reads the runs'
    state again at least every ``idle_poll_ms``."""

    @property
    def idle_poll_ms(self) -> int:
        """How long a waiter may wait before it reads the state anyway."""
        ...

    def watch(self, job_ids: Iterable[str]) -> SettleWatch:
        """Begin watching ``job_ids``."""
        ...


class RunResults(Protocol):
    """Where runs stand and news of their ending (capability ``results``): what
    ``handle.result``, ``handle.status`` and ``step.wait`` are built on, once, above the
    drivers."""

    async def statuses(self, job_ids: Sequence[str]) -> list[RunStatus | None]:
        """Each run's status, in order (None: no run has that id, or it was pruned).
        One round trip per call; callers keep a call to ``STATUS_BATCH`` ids."""
        ...

    def news(self) -> SettleNews:
        """This process's news of runs ending (listening once called)."""
        ...


STATUS_BATCH = 1_000
"""The most ids one ``RunResults.statuses`` call is given."""

ParentRefusal = Literal["not-held", "cancel-requested"]
"""Why ``ChildRuns.enqueue_children`` wrote nothing: the worker no longer holds the parent,
or an operator asked to cancel it."""


class ChildRuns(Protocol):
    """Runs enqueued by a run, and the run waiting for them (capability ``children``):
    ``step.enqueue`` and ``step.wait``. The rules are ``ferry.drivers.fan_in``'s; a driver
    offering this applies them in every operation that ends a run or puts it back, in the
    same statement, transaction or script."""

    async def enqueue_children(
        self, parent: RunFence, requests: Sequence[EnqueueRequest]
    ) -> list[EnqueueResult] | ParentRefusal:
        """Write ``requests`` as children of ``parent.job_id`` — each counted in its
        ``children_pending`` — if ``parent.worker_id`` holds it and no cancel of it was
        asked for, in one round trip; results in request order, deduplicated by key like
        ``enqueue_many`` (a deduplicated child is not counted again)."""
        ...

    async def await_children(self, parent: RunFence) -> bool:
        """Mark the held run as waiting for its children: its next park (a ``sleep``
        settle) ends as soon as none of them is pending, and the last child to end wakes
        it. Answers whether the worker still held it."""
        ...


@dataclass(frozen=True, slots=True)
class RunChange:
    """What an operator's action on many runs found on one run: its job, its state before
    the action, and whether the action applied to it (its state allowed it)."""

    id: str
    name: str
    state: JobState
    changed: bool


class JobIntrospection(Protocol):
    """Every operator capability; the CLI and the dashboard read nothing else.

    The many-run actions (``retry_runs``, ``cancel_runs``, ``delete_runs``) check each run's
    state where they change it (a row lock, a transaction, a script) and answer a
    ``RunChange`` for every id that names a run, in no particular order; an id no run has
    is left out. The one-run actions refuse what the many-run ones skip."""

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

    async def retry_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        """Put every dead or cancelled run of ``job_ids`` back to queued with fresh
        attempts (waking idle workers); other runs are left as they are."""
        ...

    async def cancel_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        """Cancel every queued or sleeping run of ``job_ids`` and record a cancel request
        on every running one (``cancel_run`` says why); other runs are left as they are."""
        ...

    async def delete_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        """Delete every run of ``job_ids`` that no worker or drain holds (queued, sleeping,
        completed, dead, cancelled), with its steps; running and moving runs stay. A child
        deleted before its end counts as ended for its parent (``ferry.drivers.fan_in``),
        in the delete's own statement, transaction or script."""
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

    async def pause_queue(self, queue: str) -> None:
        """Stop claims from ``queue`` until resumed (enqueue still works)."""
        ...

    async def resume_queue(self, queue: str) -> None:
        """Let claims from ``queue`` proceed again."""
        ...


class OutboxStore(Protocol):
    """Where side effects wait between the application's commit and the relay's publish."""

    async def append(self, type: str, payload: JsonValue, *, connection: Any) -> str:
        """Write one entry in ``connection``'s open transaction, with the current trace
        context (``ferry._tracecontext.current_traceparent``); answers its id.

        Rolled back, the entry never existed; committed, the relay publishes it. A driver
        with no transactions to join refuses (``X_DRIVER_NO_TRANSACTIONS``).
        """
        ...

    def append_sync(self, type: str, payload: JsonValue, *, connection: Any) -> str:
        """``append`` for sync code, on a blocking connection (``ferry.drivers._outbox``
        writes it once for every store)."""
        ...

    def wake(self) -> QueueWake:
        """Wakes an idle relay when an entry is committed."""
        ...

    async def claim(self, *, relay_id: str, lease_ms: int, limit: int) -> list[OutboxEntry]:
        """Lease up to ``limit`` unpublished entries (never claimed, or lease lapsed)."""
        ...

    async def mark_published(self, ids: Sequence[str], *, relay_id: str) -> list[str]:
        """Mark entries published if ``relay_id`` still holds them; answers those that landed."""
        ...

    async def publish_failed(self, entry_id: str, *, relay_id: str, error: str) -> None:
        """Note why a publish failed; the entry is offered again once its lease lapses."""
        ...

    async def pending(self) -> int:
        """How many entries are not yet published."""
        ...


class RunTransfer(Protocol):
    """Moving runs from one store to another (``ferry jobs drain``), so that a crash between
    any two calls loses nothing and leaves nothing runnable twice.

    Per batch: ``reserve`` on the source (the runs turn ``moving``: no worker claims them,
    and no crash gives them back), ``import_runs`` on the target (answers once the copies
    are committed there), then ``remove`` on the source, fenced on the reservation. A drain
    that dies at any point is finished by rerunning it to the same target: its ``reserve``
    takes the ``moving`` runs over, the re-import answers ``present``, the remove lands.
    """

    async def reserve(
        self,
        drain_id: str,
        *,
        target: str,
        limit: int,
        queues: Sequence[str] | None = None,
        include_dead: bool = False,
    ) -> list[MovedRun]:
        """Atomically turn up to ``limit`` runs ``moving``, held by ``drain_id`` for
        ``target`` (the target's ``JobDriver.location``), and answer them with their steps.

        Taken first: runs already ``moving`` to ``target`` held by another drain id (an
        interrupted drain's, whatever its filters); then ``queued`` runs (due or not) in
        claim order, then — with ``include_dead`` — ``dead`` ones; both only of ``queues``
        when given. Never taken: ``running``, ``sleeping``, ``completed``, ``cancelled``
        runs, runs ``moving`` to another target, runs ``drain_id`` already holds. The
        reservation does not lapse; ``get_run`` shows ``drain_id`` as ``locked_by``."""
        ...

    async def import_runs(self, runs: Sequence[MovedRun]) -> list[ImportResult]:
        """Write ``runs`` (with their steps, each run with its steps in one transaction) in
        the state, attempts, error, instants and steps they carry; answers in order, only
        once what it wrote is committed, and wakes this store's idle workers for the due
        queued runs it wrote, as an enqueue does. Idempotent: a second import of a run
        answers ``present`` and changes nothing. A key held by a different run, or by a
        ``moving`` run, is a ``collision`` and leaves both untouched."""
        ...

    async def remove(self, drain_id: str, job_ids: Sequence[str]) -> list[str]:
        """Delete the runs (and their steps) that are still ``moving`` under ``drain_id``;
        answers the ids deleted. A run another drain took over, or that is not ``moving``,
        is left alone."""
        ...

    async def release(self, drain_id: str, job_ids: Sequence[str]) -> list[str]:
        """Put the runs still ``moving`` under ``drain_id`` back in the state they had
        (``queued`` runs claimable again, found by the workers' next poll); answers the ids
        released."""
        ...


# --- the driver -------------------------------------------------------------------------


@runtime_checkable
class JobDriver(Protocol):
    """The core every driver offers: what it takes to run jobs. Job code never changes
    when the driver does.

    Everything else a driver may offer is a capability, an attribute named after it
    (``ferry.drivers.capabilities``): ``slots``, ``rates``, ``leases``, ``records``,
    ``outbox``, ``transfer``, ``introspect``, ``results``, ``children``. A role or feature
    that needs one asks for it with ``capabilities.need`` and is refused at start, by name,
    on a driver without it.

    ``stats`` is core: the worker's queue-depth gauge and the autoscaler read it, and every
    store can count its runs per queue and state.

    ``ack``, ``nack`` and ``heartbeat`` settle or renew one run (the spec's interface);
    ``settle_many``, ``heartbeat_many`` and ``settle_and_claim`` do many in one round trip
    (what the worker uses). ``ferry.drivers.settle.DerivedCalls`` derives the one-run calls
    and a two-trip ``settle_and_claim`` from the batched ones, so a driver writes each rule
    once.
    """

    @property
    def name(self) -> str:
        """A short name for logs and ``describe`` (``"postgres"``, ``"sqlite"``, ``"memory"``)."""
        ...

    @property
    def clock(self) -> Clock:
        """The clock whose now every ``run_at``, lease and retention is measured on."""
        ...

    @property
    def max_payload_bytes(self) -> int:
        """The largest payload, in bytes of UTF-8 JSON text, the facade lets through to this
        driver (``max_payload_bytes=`` where the driver is built)."""
        ...

    @property
    def location(self) -> str | None:
        """Where this driver's runs live, as a URL with no credentials that two drivers
        built for the same store answer alike (``postgresql://host:5432/db?schema=ferry``);
        None when they live only in this process, which is what makes a store not durable
        (``ferry jobs drain`` refuses one). It names a drain's target on the runs reserved
        for it; another name for the same server is not recognised here, which is why
        ``RunTransfer.import_runs`` treats a ``moving`` run as a collision."""
        ...

    @property
    def steps(self) -> StepStore:
        """Step persistence, beside the queue."""
        ...

    @property
    def where(self) -> str:
        """Where its runs are, as messages name it: ``schema "ferry"``, ``database "/srv/q.db"``."""
        ...

    @property
    def migrations(self) -> tuple[Migration, ...]:
        """Every migration this ferry ships for the driver's store, in version order (none
        for a store with nothing to migrate)."""
        ...

    async def open(self) -> None:
        """Connect and apply pending migrations, refusing storage this ferry must not use
        (every call opens on first use too; roles open first to refuse early)."""
        ...

    async def migrate(self) -> list[int]:
        """Apply pending migrations now; answers the versions applied."""
        ...

    async def inspect(self) -> tuple[str, LedgerState]:
        """The store (e.g. ``PostgreSQL 16.2``) and its judged migration ledger, read
        without applying or creating anything (what ``ferry doctor`` reports)."""
        ...

    async def database_now_ms(self) -> int | None:
        """The store's own clock, for the skew check; None when it has none."""
        ...

    def wake(self) -> QueueWake:
        """This process's one wake-up source for idle workers (listening once called)."""
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

    async def settle_many(self, settles: Sequence[Settle]) -> list[bool]:
        """Ack and nack many attempts, each fenced on its claimer; answers, in order, which
        landed (a second settle of one run in the batch lands nowhere)."""
        ...

    async def heartbeat_many(
        self, renewals: Sequence[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]:
        """Renew many leases (and the run's slots), each fenced like a settle; answers in order.

        A worker renews every lease it holds with one call per heartbeat interval, so one
        run must not hold the others back: a renewal the driver cannot make at once (a row
        another session holds locked) may answer not-landed rather than wait (the worker
        counts a failed renewal and tries again next interval; a whole window of them is a
        lost lease).

        ``record`` is put (as ``RecordStore.put`` would, unfenced) in the same statement,
        script or transaction — also when there is nothing to renew: an idle worker's
        presence. Only a driver offering the ``records`` capability is given one."""
        ...

    async def settle_and_claim(
        self, settles: Sequence[Settle], options: ClaimOptions
    ) -> tuple[list[bool], list[ClaimedJob]]:
        """``settle_many(settles)`` then ``claim(options)``, in one round trip where the
        driver can: the settles land first, so a slot they release is claimable at once.

        This is the worker's hot path — every round trip of a busy worker is one call —
        so a driver with a way to do both in one statement or script should override the
        two-trip default of ``DerivedCalls`` (Postgres: ``sql/queries/settle_and_claim.sql``)."""
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

    async def prune(self, policy: RetentionPolicy) -> PruneReport:
        """Delete what ``policy`` lets go of everything this driver stores, in bounded
        batches: finished runs, and — of the capabilities it offers — expired slots,
        published outbox entries, expired records and old log entries."""
        ...

    async def close(self) -> None:
        """Hand back what the driver owns (pools, listeners); borrowed ones stay open."""
        ...
