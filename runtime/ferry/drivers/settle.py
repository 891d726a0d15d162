"""The settle state machine: what an attempt's verdict does to its run, in one place.

Every driver follows these rules: the memory and SQLite drivers apply ``settle_run`` to the
run they read under their lock; the Postgres settle statement receives the decisions made
here as parameters (and applies the one rule that depends on the locked row, the cancel
override, in SQL that names this module). The rules:

* ``completed``, ``dead`` and ``cancelled`` end the run (``finished_at`` is set);
  ``retry``, ``interrupted`` and ``deferred`` put it back to ``queued``, ``sleep`` parks it.
* ``interrupted`` (a drain), ``sleep`` (``step.sleep``) and ``deferred`` (a busy slot or
  cap, a job this worker does not know) give the attempt back: none of them was a try.
* A run an operator asked to cancel while it ran never goes back to the queue: a settle
  that would requeue or park it ends it ``cancelled`` with ``X_CANCELLED`` instead.
* A settle that ends the run keeps its ``run_at`` (the instant it last became due, which
  its due-to-done latency is read from); one that requeues or parks it moves ``run_at``.
* The fence: a settle or renewal lands only while its worker holds an unexpired lease.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ferry.drivers.protocol import (
    AckOptions,
    ClaimedJob,
    ClaimOptions,
    EnqueueRequest,
    EnqueueResult,
    HeartbeatOptions,
    JobError,
    JobState,
    NackOptions,
    NackOutcome,
    Progress,
    RecordWrite,
    Renewal,
    RenewalAnswer,
    Settle,
)

CANCELLED_BY_OPERATOR = JobError("X_CANCELLED", "cancelled by an operator")
"""The error a cancel override leaves on the run."""


@dataclass(frozen=True, slots=True)
class Transition:
    """Where one settle sends its run."""

    state: JobState
    gives_back_attempt: bool
    """The attempt the claim counted is uncounted again."""

    @property
    def requeues(self) -> bool:
        """The run would be claimable again — unless an operator asked to cancel it."""
        return self.state in ("queued", "sleeping")

    @property
    def finishes(self) -> bool:
        """The run ends here (``finished_at`` is set)."""
        return self.state in ("completed", "dead", "cancelled")


_NACK: Mapping[NackOutcome, Transition] = {
    "retry": Transition("queued", gives_back_attempt=False),
    "dead": Transition("dead", gives_back_attempt=False),
    "interrupted": Transition("queued", gives_back_attempt=True),
    "sleep": Transition("sleeping", gives_back_attempt=True),
    "deferred": Transition("queued", gives_back_attempt=True),
    "cancelled": Transition("cancelled", gives_back_attempt=False),
}
_COMPLETED = Transition("completed", gives_back_attempt=False)


def transition(settle: AckOptions | NackOptions) -> Transition:
    """Where ``settle`` sends its run, before any cancel request is considered."""
    return _COMPLETED if isinstance(settle, AckOptions) else _NACK[settle.outcome]


def with_cancel_request(planned: Transition, *, cancel_requested: bool) -> Transition:
    """``planned``, unless an operator's cancel request stops the run from going back (the
    attempt is accounted as ``planned`` says; only where the run goes changes)."""
    if cancel_requested and planned.requeues:
        return Transition("cancelled", gives_back_attempt=planned.gives_back_attempt)
    return planned


@dataclass(frozen=True, slots=True)
class SettleFields:
    """The fields of a run a settle decides (besides the result an ack stores, and the
    lease every landed settle clears)."""

    state: JobState
    attempts: int
    run_at_ms: int
    last_error: JobError | None
    progress: Progress | None
    finished_at_ms: int | None


def settle_run(
    current: SettleFields,
    settle: AckOptions | NackOptions,
    *,
    cancel_requested: bool,
    now_ms: int,
) -> SettleFields:
    """``current`` after ``settle`` lands at ``now_ms``: every rule above, applied to a run
    read under the driver's lock (the memory and SQLite drivers settle through this)."""
    planned = transition(settle)
    outcome = with_cancel_request(planned, cancel_requested=cancel_requested)
    last_error, run_at_ms = current.last_error, current.run_at_ms
    if isinstance(settle, NackOptions):
        last_error = settle.error or last_error
        if not outcome.finishes:  # an ended run keeps the instant it became due
            run_at_ms = settle.run_at_ms if settle.run_at_ms is not None else now_ms
    if outcome is not planned:
        last_error = CANCELLED_BY_OPERATOR
    return SettleFields(
        state=outcome.state,
        attempts=current.attempts - (1 if outcome.gives_back_attempt else 0),
        run_at_ms=run_at_ms,
        last_error=last_error,
        progress=settle.progress or current.progress,
        finished_at_ms=now_ms if outcome.finishes else current.finished_at_ms,
    )


def holds_lease(
    *,
    state: JobState,
    locked_by: str | None,
    lease_expires_at_ms: int | None,
    worker_id: str,
    now_ms: int,
) -> bool:
    """The fence: ``worker_id`` holds the run with a lease that has not lapsed at ``now_ms``."""
    return (
        state == "running"
        and locked_by == worker_id
        and lease_expires_at_ms is not None
        and lease_expires_at_ms > now_ms
    )


def first_of_each(job_ids: Sequence[str]) -> list[bool]:
    """Which positions of a batch carry the first settle of their run: a repeat lands
    nowhere, exactly as a second call after the first would."""
    seen: set[str] = set()
    firsts = []
    for job_id in job_ids:
        firsts.append(job_id not in seen)
        seen.add(job_id)
    return firsts


class _Batched(Protocol):
    async def settle_many(self, settles: Sequence[Settle]) -> list[bool]: ...

    async def heartbeat_many(
        self, renewals: Sequence[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]: ...

    async def claim(self, options: ClaimOptions) -> list[ClaimedJob]: ...

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]: ...


class DerivedCalls:
    """The calls a driver derives from its batched ones: ``enqueue`` over ``enqueue_many``,
    ``ack``, ``nack`` and ``heartbeat`` over ``settle_many`` and ``heartbeat_many`` (so a
    driver states its enqueue, settle and renewal once), and ``settle_and_claim`` as two
    round trips (a driver that can do both in one statement overrides it)."""

    async def enqueue(self: _Batched, request: EnqueueRequest) -> EnqueueResult:
        """Enqueue one run: a batch of one."""
        return (await self.enqueue_many([request]))[0]

    async def settle_and_claim(
        self: _Batched, settles: Sequence[Settle], options: ClaimOptions
    ) -> tuple[list[bool], list[ClaimedJob]]:
        """Settle ``settles``, then claim by ``options``: the settles land first, so a slot
        they release is claimable by the same call."""
        landed = await self.settle_many(settles) if settles else []
        return landed, await self.claim(options)

    async def ack(self: _Batched, job_id: str, options: AckOptions) -> bool:
        """Complete a run if ``options.worker_id`` still holds it; answers whether it landed."""
        return (await self.settle_many([(job_id, options)]))[0]

    async def nack(self: _Batched, job_id: str, options: NackOptions) -> bool:
        """Settle an attempt that did not complete, fenced like ``ack``."""
        return (await self.settle_many([(job_id, options)]))[0]

    async def heartbeat(self: _Batched, job_id: str, options: HeartbeatOptions) -> bool:
        """Renew one lease; an operator's cancel request is handed to
        ``options.on_cancel_requested`` (the lease is renewed all the same)."""
        [answer] = await self.heartbeat_many([(job_id, options)])
        if answer.cancel_requested and options.on_cancel_requested is not None:
            options.on_cancel_requested()
        return answer.landed
