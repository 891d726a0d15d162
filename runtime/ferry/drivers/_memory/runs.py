"""The memory driver's runs: one record per run and the indexes over them."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ferry.drivers.protocol import (
    ClaimedJob,
    JobError,
    JobState,
    JsonValue,
    MovableState,
    Progress,
    RunSummary,
)
from ferry.drivers.settle import SettleFields, holds_lease


@dataclass
class Run:
    """One run, mutated in place by claims, settles and operator actions."""

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
    moving_from: MovableState | None = None
    """While ``moving``: the state the run had before a drain reserved it."""
    moving_to: str | None = None
    """While ``moving``: the location of the store the drain moves it to."""

    def held_by(self, worker_id: str, now_ms: int) -> bool:
        """The lease fence (``ferry.drivers.settle.holds_lease``) on this run."""
        return holds_lease(
            state=self.state,
            locked_by=self.locked_by,
            lease_expires_at_ms=self.lease_expires_at_ms,
            worker_id=worker_id,
            now_ms=now_ms,
        )

    def settle_fields(self) -> SettleFields:
        """The fields a settle decides, as they stand."""
        return SettleFields(
            state=self.state,
            attempts=self.attempts,
            run_at_ms=self.run_at_ms,
            last_error=self.last_error,
            progress=self.progress,
            finished_at_ms=self.finished_at_ms,
        )

    def due(self, now_ms: int) -> bool:
        """Claimable: queued or sleeping and due, or running with a lapsed lease."""
        if self.state in ("queued", "sleeping"):
            return self.run_at_ms <= now_ms
        return self.lease_lapsed(now_ms)

    def lease_lapsed(self, now_ms: int) -> bool:
        """A running run whose holder stopped renewing: a stuck lease until it is reclaimed."""
        return (
            self.state == "running"
            and self.lease_expires_at_ms is not None
            and self.lease_expires_at_ms <= now_ms
        )

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

    def claimed(self, *, slot_held: bool) -> ClaimedJob:
        assert self.lease_expires_at_ms is not None
        return ClaimedJob(
            id=self.id,
            name=self.name,
            queue=self.queue,
            payload=self.payload,
            idempotency_key=self.idempotency_key,
            attempt=self.attempts,
            max_attempts=self.max_attempts,
            tenant=self.tenant,
            actor=self.actor,
            concurrency_key=self.concurrency_key,
            run_at_ms=self.run_at_ms,
            created_at_ms=self.created_at_ms,
            lease_expires_at_ms=self.lease_expires_at_ms,
            slot_held=slot_held,
        )


@dataclass
class Runs:
    """Every run by id, the idempotency index and the paused queues."""

    by_id: dict[str, Run] = field(default_factory=dict)
    by_key: dict[str, str] = field(default_factory=dict)
    paused: set[str] = field(default_factory=set)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def add(self, run: Run) -> None:
        """Store a new run under its id and idempotency key."""
        self.by_id[run.id] = run
        self.by_key[run.idempotency_key] = run.id

    def forget(self, run: Run) -> None:
        """Drop a pruned (or moved) run; its idempotency key is free again, as in the
        durable drivers."""
        del self.by_id[run.id]
        if self.by_key.get(run.idempotency_key) == run.id:
            del self.by_key[run.idempotency_key]
