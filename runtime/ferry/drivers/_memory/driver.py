"""``memory_job_driver()``: the whole protocol in one process, and nothing durable.

Every run lives in this process's memory and is gone when it exits. It is the driver of
local experiments and of ``ferry.testing``, and it passes the same conformance suite as
Postgres; it is never a place to keep work you cannot lose. It cannot join a database
transaction, so an enqueue that asks to is refused rather than silently not joining.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ferry._clock import Clock, SystemClock
from ferry.drivers._memory.backfills import MemoryBackfillLedger
from ferry.drivers._refusals import run_in_wrong_state, run_not_found
from ferry.drivers.protocol import (
    JOB_STATES,
    AckOptions,
    ClaimedJob,
    ClaimOptions,
    EnqueueRequest,
    EnqueueResult,
    HeartbeatOptions,
    JobError,
    JobState,
    JsonValue,
    NackOptions,
    OutcomeBucket,
    Progress,
    QueueStats,
    RunDetail,
    RunFilter,
    RunLatency,
    RunSummary,
    StepRecord,
)
from ferry.errors import FerryError

_CLAIMABLE: frozenset[JobState] = frozenset({"queued", "sleeping"})
_NACK_STATE: Mapping[str, JobState] = {
    "retry": "queued",
    "dead": "dead",
    "interrupted": "queued",
    "sleep": "sleeping",
    "deferred": "queued",
    "cancelled": "cancelled",
}
_UNCOUNTED = frozenset({"interrupted", "sleep", "deferred"})
_CANCELLED = JobError("X_CANCELLED", "cancelled by an operator")


@dataclass
class _Run:
    id: str
    seq: int
    name: str
    queue: str
    payload: JsonValue
    idempotency_key: str
    max_attempts: int
    run_at_ms: int
    tenant: str | None
    actor: str | None
    concurrency_key: str | None
    priority: int
    created_at_ms: int
    updated_at_ms: int
    state: JobState = "queued"
    attempts: int = 0
    locked_by: str | None = None
    lease_expires_at_ms: int | None = None
    last_error: JobError | None = None
    result: JsonValue = None
    progress: Progress | None = None
    finished_at_ms: int | None = None
    cancel_requested_at_ms: int | None = None

    def summary(self) -> RunSummary:
        return RunSummary(
            id=self.id,
            name=self.name,
            queue=self.queue,
            state=self.state,
            attempts=self.attempts,
            max_attempts=self.max_attempts,
            tenant=self.tenant,
            run_at_ms=self.run_at_ms,
            created_at_ms=self.created_at_ms,
            updated_at_ms=self.updated_at_ms,
            last_error=self.last_error,
        )


class MemoryJobDriver:
    """All runs, steps, slots and paused queues in this process."""

    def __init__(self, *, clock: Clock | None = None) -> None:
        self._clock: Clock = clock or SystemClock()
        self._runs: dict[str, _Run] = {}
        self._by_key: dict[str, str] = {}
        self._ids = itertools.count(1)
        self._paused: set[str] = set()
        self._closed = False
        self._steps = MemoryStepStore(self)
        self._leases = MemoryLeaseStore(self._clock)
        self._backfills = MemoryBackfillLedger(self)
        self._introspect = MemoryIntrospection(self)
        self._wake = MemoryWake()

    @property
    def name(self) -> str:
        return "memory"

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def steps(self) -> MemoryStepStore:
        return self._steps

    @property
    def backfills(self) -> MemoryBackfillLedger:
        return self._backfills

    @property
    def leases(self) -> MemoryLeaseStore:
        return self._leases

    @property
    def introspect(self) -> MemoryIntrospection:
        return self._introspect

    def wake(self) -> MemoryWake:
        return self._wake

    async def enqueue(self, request: EnqueueRequest) -> EnqueueResult:
        result = self._enqueue(request)
        self._wake.notify()
        return result

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        results = [self._enqueue(request) for request in requests]
        self._wake.notify()
        return results

    def _enqueue(self, request: EnqueueRequest) -> EnqueueResult:
        self._check_open()
        if request.connection is not None:
            raise FerryError(
                "X_DRIVER_NO_TRANSACTIONS",
                f'enqueue of job "{request.name}" asked to join a transaction, and the '
                "memory driver has no transactions to join",
                "use postgres_job_driver() for transactional enqueue; in tests, run the "
                "harness on Postgres, or enqueue without connection=",
            )
        existing = self._by_key.get(request.idempotency_key)
        if existing is not None:
            return EnqueueResult(existing, deduplicated=True)
        now = self._clock.now_ms()
        seq = next(self._ids)
        run = _Run(
            id=str(seq),
            seq=seq,
            name=request.name,
            queue=request.queue,
            payload=request.payload,
            idempotency_key=request.idempotency_key,
            max_attempts=request.max_attempts,
            run_at_ms=request.run_at_ms if request.run_at_ms is not None else now,
            tenant=request.tenant,
            actor=request.actor,
            concurrency_key=request.concurrency_key,
            priority=request.priority,
            created_at_ms=now,
            updated_at_ms=now,
        )
        self._runs[run.id] = run
        self._by_key[run.idempotency_key] = run.id
        return EnqueueResult(run.id, deduplicated=False)

    async def claim(self, options: ClaimOptions) -> list[ClaimedJob]:
        self._check_open()
        now = self._clock.now_ms()
        queues = set(options.queues) if options.queues is not None else None
        names = set(options.names) if options.names is not None else None
        due = [
            run
            for run in self._runs.values()
            if _claimable(run, now)
            and run.queue not in self._paused
            and (queues is None or run.queue in queues)
            and (names is None or run.name in names)
        ]
        due.sort(key=lambda r: (-r.priority, r.run_at_ms, r.seq))
        claimed = []
        for run in due[: options.limit]:
            run.state = "running"
            run.attempts += 1
            run.locked_by = options.worker_id
            run.lease_expires_at_ms = now + options.lease_ms
            run.updated_at_ms = now
            claimed.append(_claimed(run))
        return claimed

    async def ack(self, job_id: str, options: AckOptions) -> bool:
        run = self._held(job_id, options.worker_id)
        if run is None:
            return False
        now = self._clock.now_ms()
        run.state = "completed"
        run.result = options.result
        run.progress = options.progress or run.progress
        run.finished_at_ms = now
        self._release(run, now)
        return True

    async def nack(self, job_id: str, options: NackOptions) -> bool:
        run = self._held(job_id, options.worker_id)
        if run is None:
            return False
        now = self._clock.now_ms()
        run.state = _NACK_STATE[options.outcome]
        if options.outcome in _UNCOUNTED:
            run.attempts -= 1
        if options.error is not None:
            run.last_error = options.error
        if run.cancel_requested_at_ms is not None and run.state in _CLAIMABLE:
            # An operator asked to cancel it while it ran: it never goes back to the queue.
            run.state, run.last_error = "cancelled", _CANCELLED
        run.progress = options.progress or run.progress
        if run.state in ("dead", "cancelled"):
            # An ended run keeps the instant it last became due, as the SQL settle does:
            # its due-to-done latency is read from it.
            run.finished_at_ms = now
        else:
            run.run_at_ms = options.run_at_ms if options.run_at_ms is not None else now
        self._release(run, now)
        return True

    async def heartbeat(self, job_id: str, options: HeartbeatOptions) -> bool:
        run = self._held(job_id, options.worker_id)
        if run is None:
            return False
        now = self._clock.now_ms()
        run.lease_expires_at_ms = now + options.lease_ms
        run.progress = options.progress or run.progress
        run.updated_at_ms = now
        self._leases.extend_holder(run.id, now + options.lease_ms)
        if run.cancel_requested_at_ms is not None and options.on_cancel_requested is not None:
            options.on_cancel_requested()
        return True

    async def stats(self) -> list[QueueStats]:
        counts: dict[str, dict[JobState, int]] = {}
        oldest: dict[str, int] = {}
        now = self._clock.now_ms()
        for run in self._runs.values():
            per_queue = counts.setdefault(run.queue, dict.fromkeys(JOB_STATES, 0))
            per_queue[run.state] += 1
            if run.state == "queued" and run.run_at_ms <= now:
                oldest[run.queue] = min(oldest.get(run.queue, run.run_at_ms), run.run_at_ms)
        for queue in self._paused:
            counts.setdefault(queue, dict.fromkeys(JOB_STATES, 0))
        return [
            QueueStats(queue, state_counts, queue in self._paused, oldest.get(queue))
            for queue, state_counts in sorted(counts.items())
        ]

    async def close(self) -> None:
        self._closed = True

    def _held(self, job_id: str, worker_id: str) -> _Run | None:
        """The run if ``worker_id`` still holds an unexpired lease on it (the fence)."""
        run = self._runs.get(job_id)
        if run is None or run.state != "running" or run.locked_by != worker_id:
            return None
        if run.lease_expires_at_ms is not None and run.lease_expires_at_ms <= (
            self._clock.now_ms()
        ):
            return None
        return run

    def _release(self, run: _Run, now: int) -> None:
        run.locked_by = None
        run.lease_expires_at_ms = None
        run.updated_at_ms = now
        self._leases.release_holder(run.id)

    def _check_open(self) -> None:
        if self._closed:
            raise FerryError(
                "X_DRIVER_CLOSED",
                "the memory job driver was used after close()",
                "create a new driver, or close it only at shutdown",
            )


class MemoryWake:
    """Wake-ups within the process: an enqueue sets an event every waiter shares."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    @property
    def healthy(self) -> bool:
        return True

    @property
    def idle_poll_ms(self) -> int:
        return 5_000

    def notify(self) -> None:
        self._event.set()

    async def wait(self, timeout_ms: int) -> bool:
        try:
            await asyncio.wait_for(self._event.wait(), timeout_ms / 1000)
        except TimeoutError:
            return False
        self._event.clear()
        return True

    async def close(self) -> None:
        self._event.set()


class MemoryStepStore:
    """Step records per run, fenced on the worker holding the run."""

    def __init__(self, driver: MemoryJobDriver) -> None:
        self._driver = driver
        self._records: dict[str, dict[str, StepRecord]] = {}

    async def load(self, job_id: str) -> Mapping[str, StepRecord]:
        return dict(self._records.get(job_id, {}))

    async def record(self, job_id: str, step: StepRecord, *, worker_id: str) -> bool:
        if self._driver._held(job_id, worker_id) is None:
            return False
        self._records.setdefault(job_id, {}).setdefault(step.name, step)
        return True

    def for_run(self, job_id: str) -> list[StepRecord]:
        return sorted(self._records.get(job_id, {}).values(), key=lambda s: s.started_at_ms)


class MemoryLeaseStore:
    """Concurrency slots: key -> holder -> expiry."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._slots: dict[str, dict[str, int]] = {}

    async def acquire(self, key: str, *, holder: str, limit: int, ttl_ms: int) -> bool:
        now = self._clock.now_ms()
        slots = self._live(key, now)
        if holder not in slots and len(slots) >= limit:
            return False
        slots[holder] = now + ttl_ms
        self._slots[key] = slots
        return True

    async def release(self, key: str, *, holder: str) -> None:
        self._slots.get(key, {}).pop(holder, None)

    async def holders(self, key: str) -> Sequence[str]:
        return sorted(self._live(key, self._clock.now_ms()))

    def release_holder(self, holder: str) -> None:
        """Give back every slot ``holder`` holds (a settled run's key and caps)."""
        for slots in self._slots.values():
            slots.pop(holder, None)

    def extend_holder(self, holder: str, expires_at_ms: int) -> None:
        """Extend every slot ``holder`` holds to ``expires_at_ms``."""
        for slots in self._slots.values():
            if holder in slots:
                slots[holder] = expires_at_ms

    def _live(self, key: str, now: int) -> dict[str, int]:
        return {h: exp for h, exp in self._slots.get(key, {}).items() if exp > now}


class MemoryIntrospection:
    """``JobIntrospection`` over the memory driver's runs."""

    def __init__(self, driver: MemoryJobDriver) -> None:
        self._driver = driver
        self._revoked: dict[str, int] = {}

    async def list_runs(self, run_filter: RunFilter) -> Sequence[RunSummary]:
        f = run_filter
        before = int(f.before_id) if f.before_id is not None else None
        now = self._driver.clock.now_ms()
        runs = [
            run
            for run in sorted(self._driver._runs.values(), key=lambda r: -r.seq)
            if (f.queue is None or run.queue == f.queue)
            and (f.name is None or run.name == f.name)
            and (f.state is None or run.state == f.state)
            and (f.tenant is None or run.tenant == f.tenant)
            and (f.created_after_ms is None or run.created_at_ms > f.created_after_ms)
            and (f.created_before_ms is None or run.created_at_ms < f.created_before_ms)
            and (before is None or run.seq < before)
            and (not f.lease_expired or _lease_lapsed(run, now))
        ]
        return [run.summary() for run in runs[: f.limit]]

    async def get_run(self, job_id: str) -> RunDetail | None:
        run = self._driver._runs.get(job_id)
        if run is None:
            return None
        return RunDetail(
            summary=run.summary(),
            payload=run.payload,
            idempotency_key=run.idempotency_key,
            actor=run.actor,
            concurrency_key=run.concurrency_key,
            locked_by=run.locked_by,
            lease_expires_at_ms=run.lease_expires_at_ms,
            result=run.result,
            progress=run.progress,
            finished_at_ms=run.finished_at_ms,
            steps=tuple(self._driver.steps.for_run(job_id)),
            cancel_requested_at_ms=run.cancel_requested_at_ms,
        )

    async def retry_run(self, job_id: str) -> None:
        run = self._existing(job_id)
        if run.state not in ("dead", "cancelled"):
            raise _wrong_state(run, "retried", "dead or cancelled")
        now = self._driver.clock.now_ms()
        run.state, run.attempts, run.run_at_ms = "queued", 0, now
        run.finished_at_ms, run.updated_at_ms = None, now
        run.cancel_requested_at_ms = None

    async def cancel_run(self, job_id: str) -> JobState:
        run = self._existing(job_id)
        now = self._driver.clock.now_ms()
        if run.state == "running":
            run.cancel_requested_at_ms = run.cancel_requested_at_ms or now
            run.updated_at_ms = now
            return run.state
        if run.state not in _CLAIMABLE:
            raise _wrong_state(run, "cancelled", "queued, sleeping or running")
        run.state, run.finished_at_ms, run.updated_at_ms = "cancelled", now, now
        run.last_error = _CANCELLED
        return run.state

    async def throughput(self, since_ms: int) -> Mapping[str, int]:
        completed: dict[str, int] = {}
        for run in self._driver._runs.values():
            if run.state == "completed" and (run.finished_at_ms or 0) > since_ms:
                completed[run.queue] = completed.get(run.queue, 0) + 1
        return completed

    async def outcome_series(self, since_ms: int, bucket_ms: int) -> Sequence[OutcomeBucket]:
        counts: dict[tuple[str, int], list[int]] = {}
        for run in self._ended():
            assert run.finished_at_ms is not None
            if run.finished_at_ms >= since_ms:
                start = since_ms + (run.finished_at_ms - since_ms) // bucket_ms * bucket_ms
                bucket = counts.setdefault((run.queue, start), [0, 0])
                bucket[0 if run.state == "completed" else 1] += 1
        return [
            OutcomeBucket(queue, start, completed, dead)
            for (queue, start), (completed, dead) in sorted(counts.items())
        ]

    async def recent_latencies(self, limit: int) -> Sequence[RunLatency]:
        newest = sorted(self._ended(), key=lambda r: (r.finished_at_ms, r.seq), reverse=True)
        return [
            RunLatency(
                id=run.id,
                queue=run.queue,
                name=run.name,
                state="completed" if run.state == "completed" else "dead",
                finished_at_ms=run.finished_at_ms or 0,
                latency_ms=max((run.finished_at_ms or 0) - run.run_at_ms, 0),
            )
            for run in newest[: max(limit, 0)]
        ]

    async def revoke_session(self, session: str, *, until_ms: int) -> None:
        now = self._driver.clock.now_ms()
        self._revoked = {s: until for s, until in self._revoked.items() if until > now}
        self._revoked[session] = max(self._revoked.get(session, until_ms), until_ms)

    async def session_revoked(self, session: str) -> bool:
        return self._revoked.get(session, 0) > self._driver.clock.now_ms()

    def _ended(self) -> list[_Run]:
        return [
            run
            for run in self._driver._runs.values()
            if run.state in ("completed", "dead") and run.finished_at_ms is not None
        ]

    async def pause_queue(self, queue: str) -> None:
        self._driver._paused.add(queue)

    async def resume_queue(self, queue: str) -> None:
        self._driver._paused.discard(queue)

    def _existing(self, job_id: str) -> _Run:
        run = self._driver._runs.get(job_id)
        if run is None:
            raise run_not_found(job_id)
        return run


def _claimable(run: _Run, now: int) -> bool:
    if run.state in _CLAIMABLE:
        return run.run_at_ms <= now
    return _lease_lapsed(run, now)


def _lease_lapsed(run: _Run, now: int) -> bool:
    """A running run whose holder stopped renewing: a stuck lease until it is reclaimed."""
    return (
        run.state == "running"
        and run.lease_expires_at_ms is not None
        and run.lease_expires_at_ms <= now
    )


def _claimed(run: _Run) -> ClaimedJob:
    assert run.lease_expires_at_ms is not None
    return ClaimedJob(
        id=run.id,
        name=run.name,
        queue=run.queue,
        payload=run.payload,
        idempotency_key=run.idempotency_key,
        attempt=run.attempts,
        max_attempts=run.max_attempts,
        tenant=run.tenant,
        actor=run.actor,
        concurrency_key=run.concurrency_key,
        run_at_ms=run.run_at_ms,
        created_at_ms=run.created_at_ms,
        lease_expires_at_ms=run.lease_expires_at_ms,
    )


def _wrong_state(run: _Run, action: str, allowed: str) -> FerryError:
    return run_in_wrong_state(run.id, run.name, run.state, action, allowed)


def memory_job_driver(*, clock: Clock | None = None) -> MemoryJobDriver:
    """A driver that keeps everything in this process — for tests and experiments only."""
    return MemoryJobDriver(clock=clock)
