"""``memory_job_driver()``: the whole protocol in one process, and nothing durable.

Every run lives in this process's memory and is gone when it exits. It is the driver of
local experiments and of ``ferry.testing``, and it passes the same conformance suite as
Postgres; it is never a place to keep work you cannot lose. It cannot join a database
transaction, so an enqueue that asks to is refused rather than silently not joining.
"""

from __future__ import annotations

from collections.abc import Sequence

from ferry._clock import Clock, SystemClock
from ferry._payload import DEFAULT_MAX_PAYLOAD_BYTES, payload_limit
from ferry.drivers._ledger import LedgerState, Migration
from ferry.drivers._memory.backfills import MemoryBackfillLedger
from ferry.drivers._memory.introspect import MemoryIntrospection
from ferry.drivers._memory.leases import MemoryLeaseStore
from ferry.drivers._memory.outbox import MemoryOutbox
from ferry.drivers._memory.runs import Run, Runs
from ferry.drivers._memory.scheduler import MemorySchedulerStore
from ferry.drivers._memory.steps import MemoryStepStore
from ferry.drivers._memory.transfer import MemoryTransfer
from ferry.drivers._memory.wake import MemoryWake
from ferry.drivers._memory.webhooks import MemoryWebhookLedger
from ferry.drivers._refusals import no_transaction_to_join
from ferry.drivers.protocol import (
    JOB_STATES,
    AckOptions,
    ClaimedJob,
    ClaimOptions,
    EnqueueRequest,
    EnqueueResult,
    JobState,
    PruneReport,
    QueueStats,
    Renewal,
    RenewalAnswer,
    RetentionPolicy,
    Settle,
)
from ferry.drivers.settle import DerivedCalls, first_of_each, settle_run
from ferry.errors import FerryError


class MemoryJobDriver(DerivedCalls):
    """All runs, steps, slots, scheduler rows, outbox entries and ledgers in this process."""

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
    ) -> None:
        self._clock: Clock = clock or SystemClock()
        self._max_payload_bytes = payload_limit(max_payload_bytes)
        self._runs = Runs()
        self._closed = False
        self._steps = MemoryStepStore(self._holds)
        self._leases = MemoryLeaseStore(self._clock)
        self._backfills = MemoryBackfillLedger(self._holds)
        self._introspect = MemoryIntrospection(self._runs, self._steps, self._clock)
        self._scheduler = MemorySchedulerStore()
        self._outbox = MemoryOutbox(self._clock)
        self._webhooks = MemoryWebhookLedger()
        self._wake = MemoryWake(self._clock)
        self._transfer = MemoryTransfer(self._runs, self._steps, self._clock, self._wake.notify)

    @property
    def name(self) -> str:
        return "memory"

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def max_payload_bytes(self) -> int:
        return self._max_payload_bytes

    @property
    def location(self) -> None:
        """None: the runs live in this process only (``ferry jobs drain`` refuses it)."""
        return None

    @property
    def steps(self) -> MemoryStepStore:
        return self._steps

    @property
    def leases(self) -> MemoryLeaseStore:
        return self._leases

    @property
    def introspect(self) -> MemoryIntrospection:
        return self._introspect

    @property
    def scheduler(self) -> MemorySchedulerStore:
        return self._scheduler

    @property
    def outbox(self) -> MemoryOutbox:
        return self._outbox

    @property
    def webhooks(self) -> MemoryWebhookLedger:
        return self._webhooks

    @property
    def backfills(self) -> MemoryBackfillLedger:
        return self._backfills

    @property
    def transfer(self) -> MemoryTransfer:
        return self._transfer

    @property
    def where(self) -> str:
        """Where its runs are, as messages name it (``ferry dev --db memory://``)."""
        return "this process's memory"

    @property
    def migrations(self) -> tuple[Migration, ...]:
        """None: there are no tables to migrate."""
        return ()

    async def open(self) -> None:
        """Nothing to connect to; refuses a closed driver like every other call."""
        self._check_open()

    async def migrate(self) -> list[int]:
        """Nothing to apply."""
        self._check_open()
        return []

    async def inspect(self) -> tuple[str, LedgerState]:
        """What ``ferry doctor`` reports: memory, and a ledger with nothing to judge."""
        return "memory (not durable: gone when this process exits)", LedgerState((), (), None)

    async def database_now_ms(self) -> None:
        """None: there is no database clock, only this process's."""
        return None

    def wake(self) -> MemoryWake:
        return self._wake

    async def enqueue(self, request: EnqueueRequest) -> EnqueueResult:
        return (await self.enqueue_many([request]))[0]

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        results = [self._enqueue(request) for request in requests]
        now = self._clock.now_ms()
        later = [r.run_at_ms for r in requests if r.run_at_ms is not None and r.run_at_ms > now]
        if len(later) < len(requests):
            self._wake.notify()
        if later:
            self._wake.expect(min(later))  # as the Postgres NOTIFY: the soonest per batch
        return results

    def _enqueue(self, request: EnqueueRequest) -> EnqueueResult:
        self._check_open()
        if request.connection is not None:
            raise no_transaction_to_join(
                f'enqueue of job "{request.name}"',
                "memory",
                "use postgres_job_driver() or sqlite_job_driver() for transactional enqueue; "
                "in tests, run the harness on one of them, or enqueue without connection=",
            )
        existing = self._runs.by_key.get(request.idempotency_key)
        if existing is not None:
            return EnqueueResult(existing, deduplicated=True)
        now = self._clock.now_ms()
        seq = next(self._runs.ids)
        run = Run(
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
        self._runs.add(run)
        return EnqueueResult(run.id, deduplicated=False)

    async def claim(self, options: ClaimOptions) -> list[ClaimedJob]:
        self._check_open()
        now = self._clock.now_ms()
        queues = set(options.queues) if options.queues is not None else None
        names = set(options.names) if options.names is not None else None
        due = sorted(
            (
                run
                for run in self._runs.by_id.values()
                if run.due(now)
                and run.queue not in self._runs.paused
                and (queues is None or run.queue in queues)
                and (names is None or run.name in names)
            ),
            key=lambda r: (-r.priority, r.run_at_ms, r.seq),
        )
        lease_until = now + options.lease_ms
        claimed: list[ClaimedJob] = []
        for run in due:
            if len(claimed) >= options.limit:
                break
            limit = options.limits.get(run.name)
            keyed = limit is not None and run.concurrency_key is not None
            if keyed and not self._leases.take(
                run.concurrency_key or "",
                holder=run.id,
                limit=limit or 0,
                expires_at_ms=lease_until,
            ):
                continue  # its key is full: skipped, never claimed only to be deferred
            run.state = "running"
            run.attempts += 1
            run.locked_by = options.worker_id
            run.lease_expires_at_ms = lease_until
            run.updated_at_ms = now
            claimed.append(run.claimed(slot_held=keyed))
        return claimed

    async def settle_many(self, settles: Sequence[Settle]) -> list[bool]:
        self._check_open()
        now = self._clock.now_ms()
        landed = []
        woke = False
        for (job_id, settle), first in zip(
            settles, first_of_each([job_id for job_id, _ in settles]), strict=True
        ):
            run = self._runs.by_id.get(job_id)
            if not first or run is None or not run.held_by(settle.worker_id, now):
                landed.append(False)
                continue
            fields = settle_run(
                run.settle_fields(),
                settle,
                cancel_requested=run.cancel_requested_at_ms is not None,
                now_ms=now,
            )
            run.state, run.attempts, run.run_at_ms = fields.state, fields.attempts, fields.run_at_ms
            run.last_error, run.progress = fields.last_error, fields.progress
            run.finished_at_ms = fields.finished_at_ms
            if isinstance(settle, AckOptions):
                run.result = settle.result
            run.locked_by = run.lease_expires_at_ms = None
            run.updated_at_ms = now
            self._leases.release_holder(run.id)
            woke = woke or (run.state == "queued" and run.run_at_ms <= now)
            landed.append(True)
        if woke:
            self._wake.notify()
        return landed

    async def heartbeat_many(self, renewals: Sequence[Renewal]) -> list[RenewalAnswer]:
        self._check_open()
        now = self._clock.now_ms()
        answers = []
        for job_id, options in renewals:
            run = self._runs.by_id.get(job_id)
            if run is None or not run.held_by(options.worker_id, now):
                answers.append(RenewalAnswer(landed=False))
                continue
            run.lease_expires_at_ms = now + options.lease_ms
            run.progress = options.progress or run.progress
            run.updated_at_ms = now
            self._leases.extend_holder(run.id, now + options.lease_ms)
            answers.append(RenewalAnswer(True, run.cancel_requested_at_ms is not None))
        return answers

    async def stats(self) -> list[QueueStats]:
        counts: dict[str, dict[JobState, int]] = {}
        oldest: dict[str, int] = {}
        due: dict[str, int] = {}
        now = self._clock.now_ms()
        for run in self._runs.by_id.values():
            per_queue = counts.setdefault(run.queue, dict.fromkeys(JOB_STATES, 0))
            per_queue[run.state] += 1
            if run.state in ("queued", "sleeping") and run.run_at_ms <= now:
                due[run.queue] = due.get(run.queue, 0) + 1
            if run.state == "queued" and run.run_at_ms <= now:
                oldest[run.queue] = min(oldest.get(run.queue, run.run_at_ms), run.run_at_ms)
        for queue in self._runs.paused:
            counts.setdefault(queue, dict.fromkeys(JOB_STATES, 0))
        return [
            QueueStats(
                queue,
                state_counts,
                queue in self._runs.paused,
                oldest.get(queue),
                due.get(queue, 0),
            )
            for queue, state_counts in sorted(counts.items())
        ]

    async def prune(self, policy: RetentionPolicy) -> PruneReport:
        now = self._clock.now_ms()
        completed = dead = 0
        for run in list(self._runs.by_id.values()):
            retention = {
                "completed": policy.completed_ms,
                "cancelled": policy.completed_ms,
                "dead": policy.dead_ms,
            }.get(run.state)
            finished = run.finished_at_ms
            if retention is None or finished is None or finished >= now - retention:
                continue
            self._runs.forget(run)
            self._steps.forget(run.id)
            if run.state == "dead":
                dead += 1
            else:
                completed += 1
        outbox = (
            self._outbox.prune(now - policy.published_outbox_ms)
            if policy.published_outbox_ms is not None
            else 0
        )
        attempts = (
            self._webhooks.prune(now - policy.webhook_attempts_ms)
            if policy.webhook_attempts_ms is not None
            else 0
        )
        return PruneReport(
            completed=completed,
            dead=dead,
            slots=self._leases.prune_expired(),
            outbox=outbox,
            webhook_attempts=attempts,
        )

    async def close(self) -> None:
        self._closed = True

    def _holds(self, job_id: str, worker_id: str) -> bool:
        """The lease fence, for the stores that write under a run (steps, backfills)."""
        run = self._runs.by_id.get(job_id)
        return run is not None and run.held_by(worker_id, self._clock.now_ms())

    def _check_open(self) -> None:
        if self._closed:
            raise FerryError(
                "X_DRIVER_CLOSED",
                "the memory job driver was used after close()",
                "create a new driver, or close it only at shutdown",
            )


def memory_job_driver(
    *, clock: Clock | None = None, max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES
) -> MemoryJobDriver:
    """A driver that keeps everything in this process — for tests and experiments only.

    ``max_payload_bytes`` limits one enqueued payload's JSON text (default 1 MiB), the
    same rule as on the durable drivers.
    """
    return MemoryJobDriver(clock=clock, max_payload_bytes=max_payload_bytes)
