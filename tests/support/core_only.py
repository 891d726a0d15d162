"""A driver that offers the core and nothing else: the proof that the core is enough to run
jobs, and the driver every capability refusal is tested on.

It forwards each core member of ``JobDriver`` — and only those — to a memory driver, so no
capability (``slots``, ``leases``, ``records``, ``outbox``, ``transfer``, ``introspect``) is
reachable through it: anything that asks for one gets ``X_DRIVER_CAPABILITY``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ferry._clock import Clock
from ferry.drivers import MemoryJobDriver, memory_job_driver
from ferry.drivers._ledger import LedgerState, Migration
from ferry.drivers.protocol import (
    AckOptions,
    ClaimedJob,
    ClaimOptions,
    EnqueueRequest,
    EnqueueResult,
    HeartbeatOptions,
    NackOptions,
    PruneReport,
    QueueStats,
    QueueWake,
    RecordWrite,
    Renewal,
    RenewalAnswer,
    RetentionPolicy,
    Settle,
    StepStore,
)


class CoreOnlyDriver:
    """Every core member of ``JobDriver``, over a memory driver's store; no capability."""

    def __init__(self, clock: Clock) -> None:
        self._inner = memory_job_driver(clock=clock)

    name = "core-only"

    @property
    def inner(self) -> MemoryJobDriver:
        """The memory driver whose store this one forwards to: what a test reads the runs
        through (this driver offers no introspection)."""
        return self._inner

    @property
    def clock(self) -> Clock:
        return self._inner.clock

    @property
    def max_payload_bytes(self) -> int:
        return self._inner.max_payload_bytes

    @property
    def location(self) -> str | None:
        return self._inner.location

    @property
    def steps(self) -> StepStore:
        return self._inner.steps

    @property
    def where(self) -> str:
        return self._inner.where

    @property
    def migrations(self) -> tuple[Migration, ...]:
        return self._inner.migrations

    async def open(self) -> None:
        await self._inner.open()

    async def migrate(self) -> list[int]:
        return await self._inner.migrate()

    async def inspect(self) -> tuple[str, LedgerState]:
        return await self._inner.inspect()

    async def database_now_ms(self) -> int | None:
        return await self._inner.database_now_ms()

    def wake(self) -> QueueWake:
        return self._inner.wake()

    async def enqueue(self, request: EnqueueRequest) -> EnqueueResult:
        return await self._inner.enqueue(request)

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        return await self._inner.enqueue_many(requests)

    async def claim(self, options: ClaimOptions) -> list[ClaimedJob]:
        return await self._inner.claim(options)

    async def settle_many(self, settles: Sequence[Settle]) -> list[bool]:
        return await self._inner.settle_many(settles)

    async def heartbeat_many(
        self, renewals: Sequence[Renewal], *, record: RecordWrite | None = None
    ) -> list[RenewalAnswer]:
        assert record is None, "a driver without the records capability is given no record"
        return await self._inner.heartbeat_many(renewals)

    async def settle_and_claim(
        self, settles: Sequence[Settle], options: ClaimOptions
    ) -> tuple[list[bool], list[ClaimedJob]]:
        return await self._inner.settle_and_claim(settles, options)

    async def ack(self, job_id: str, options: AckOptions) -> bool:
        return await self._inner.ack(job_id, options)

    async def nack(self, job_id: str, options: NackOptions) -> bool:
        return await self._inner.nack(job_id, options)

    async def heartbeat(self, job_id: str, options: HeartbeatOptions) -> bool:
        return await self._inner.heartbeat(job_id, options)

    async def stats(self) -> list[QueueStats]:
        return await self._inner.stats()

    async def prune(self, policy: RetentionPolicy) -> PruneReport:
        return await self._inner.prune(policy)

    async def close(self) -> None:
        await self._inner.close()
