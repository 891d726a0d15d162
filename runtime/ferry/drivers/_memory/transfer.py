"""``RunTransfer`` in one process: reserve, import, remove and release over the run records.

Each call runs to completion without an ``await`` in between, so it is as atomic here as
one statement is on Postgres.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ferry._clock import Clock
from ferry.drivers._memory.runs import Run, Runs
from ferry.drivers._memory.steps import MemoryStepStore
from ferry.drivers._transfer import same_run
from ferry.drivers.protocol import ImportResult, MovedRun


class MemoryTransfer:
    """Moves runs into and out of the memory driver (see ``RunTransfer``)."""

    def __init__(
        self, runs: Runs, steps: MemoryStepStore, clock: Clock, notify: Callable[[], None]
    ) -> None:
        self._runs = runs
        self._steps = steps
        self._clock = clock
        self._notify = notify

    async def reserve(
        self,
        drain_id: str,
        *,
        target: str,
        limit: int,
        queues: Sequence[str] | None = None,
        include_dead: bool = False,
    ) -> list[MovedRun]:
        wanted = set(queues) if queues is not None else None
        runs = self._runs.by_id.values()

        def of_queues(run: Run) -> bool:
            return wanted is None or run.queue in wanted

        adopted = sorted(
            (
                r
                for r in runs
                if r.state == "moving" and r.moving_to == target and r.locked_by != drain_id
            ),
            key=lambda r: r.seq,
        )
        queued = sorted(
            (r for r in runs if r.state == "queued" and of_queues(r)),
            key=lambda r: (-r.priority, r.run_at_ms, r.seq),
        )
        dead = sorted(
            (r for r in runs if include_dead and r.state == "dead" and of_queues(r)),
            key=lambda r: (r.finished_at_ms or 0, r.seq),
        )
        now = self._clock.now_ms()
        picked = [*adopted, *queued, *dead][: max(limit, 0)]
        for run in picked:
            if run.state != "moving":
                run.moving_from = "dead" if run.state == "dead" else "queued"
            run.state, run.moving_to, run.locked_by = "moving", target, drain_id
            run.updated_at_ms = now
        return [self._moved(run) for run in sorted(picked, key=lambda r: r.seq)]

    async def import_runs(self, runs: Sequence[MovedRun]) -> list[ImportResult]:
        now = self._clock.now_ms()
        results = [self._import(run, now) for run in runs]
        if any(r.outcome == "imported" for r in results):
            self._notify()
        return results

    async def remove(self, drain_id: str, job_ids: Sequence[str]) -> list[str]:
        removed = []
        for run in self._held(drain_id, job_ids):
            self._runs.forget(run)
            self._steps.forget(run.id)
            removed.append(run.id)
        return removed

    async def release(self, drain_id: str, job_ids: Sequence[str]) -> list[str]:
        now = self._clock.now_ms()
        released = []
        for run in self._held(drain_id, job_ids):
            run.state = run.moving_from or "queued"
            run.moving_from = run.moving_to = run.locked_by = None
            run.updated_at_ms = now
            released.append(run.id)
        return released

    def _held(self, drain_id: str, job_ids: Sequence[str]) -> list[Run]:
        """The runs of ``job_ids`` still ``moving`` under ``drain_id``: the fence."""
        runs = (self._runs.by_id.get(job_id) for job_id in dict.fromkeys(job_ids))
        return [
            r for r in runs if r is not None and r.state == "moving" and r.locked_by == drain_id
        ]

    def _import(self, moved: MovedRun, now: int) -> ImportResult:
        holder_id = self._runs.by_key.get(moved.idempotency_key)
        if holder_id is not None:
            holder = self._runs.by_id[holder_id]
            same = holder.state != "moving" and same_run(holder, moved)
            return ImportResult("present" if same else "collision", holder_id)
        seq = next(self._runs.ids)
        run = Run(
            id=str(seq),
            seq=seq,
            name=moved.name,
            queue=moved.queue,
            payload=moved.payload,
            idempotency_key=moved.idempotency_key,
            max_attempts=moved.max_attempts,
            run_at_ms=moved.run_at_ms,
            tenant=moved.tenant,
            actor=moved.actor,
            concurrency_key=moved.concurrency_key,
            priority=moved.priority,
            created_at_ms=moved.created_at_ms,
            updated_at_ms=now,
            state=moved.state,
            attempts=moved.attempts,
            last_error=moved.last_error,
            progress=moved.progress,
            finished_at_ms=moved.finished_at_ms,
        )
        self._runs.add(run)
        self._steps.put(run.id, moved.steps)
        return ImportResult("imported", run.id)

    def _moved(self, run: Run) -> MovedRun:
        assert run.moving_from is not None
        return MovedRun(
            id=run.id,
            name=run.name,
            queue=run.queue,
            payload=run.payload,
            idempotency_key=run.idempotency_key,
            state=run.moving_from,
            attempts=run.attempts,
            max_attempts=run.max_attempts,
            priority=run.priority,
            run_at_ms=run.run_at_ms,
            tenant=run.tenant,
            actor=run.actor,
            concurrency_key=run.concurrency_key,
            last_error=run.last_error,
            progress=run.progress,
            created_at_ms=run.created_at_ms,
            finished_at_ms=run.finished_at_ms,
            steps=tuple(self._steps.for_run(run.id)),
        )
