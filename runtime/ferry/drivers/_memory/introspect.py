"""``JobIntrospection`` over the memory driver's runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ferry._clock import Clock
from ferry._names import check_name
from ferry.drivers._memory.runs import Run, Runs
from ferry.drivers._memory.steps import MemoryStepStore
from ferry.drivers._refusals import run_in_wrong_state, run_not_found
from ferry.drivers.protocol import (
    JobState,
    OutcomeBucket,
    RunDetail,
    RunFilter,
    RunLatency,
    RunSummary,
)
from ferry.drivers.settle import CANCELLED_BY_OPERATOR


class MemoryIntrospection:
    """Lists, shows, retries, cancels and pauses over plain dictionaries."""

    def __init__(self, runs: Runs, steps: MemoryStepStore, clock: Clock) -> None:
        self._runs = runs
        self._steps = steps
        self._clock = clock

    async def list_runs(self, run_filter: RunFilter) -> Sequence[RunSummary]:
        f = run_filter
        before = int(f.before_id) if f.before_id is not None else None
        now = self._clock.now_ms()
        runs = [
            run
            for run in sorted(self._runs.by_id.values(), key=lambda r: -r.seq)
            if (f.queue is None or run.queue == f.queue)
            and (f.name is None or run.name == f.name)
            and (f.state is None or run.state == f.state)
            and (f.tenant is None or run.tenant == f.tenant)
            and (f.created_after_ms is None or run.created_at_ms > f.created_after_ms)
            and (f.created_before_ms is None or run.created_at_ms < f.created_before_ms)
            and (before is None or run.seq < before)
            and (not f.lease_expired or run.lease_lapsed(now))
        ]
        return [run.summary() for run in runs[: f.limit]]

    async def get_run(self, job_id: str) -> RunDetail | None:
        run = self._runs.by_id.get(job_id)
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
            steps=tuple(self._steps.for_run(job_id)),
            cancel_requested_at_ms=run.cancel_requested_at_ms,
        )

    async def retry_run(self, job_id: str) -> None:
        run = self._existing(job_id)
        if run.state not in ("dead", "cancelled"):
            raise _wrong_state(run, "retried", "dead or cancelled")
        now = self._clock.now_ms()
        run.state, run.attempts, run.run_at_ms = "queued", 0, now
        run.finished_at_ms, run.updated_at_ms = None, now
        run.cancel_requested_at_ms = None

    async def cancel_run(self, job_id: str) -> JobState:
        run = self._existing(job_id)
        now = self._clock.now_ms()
        if run.state == "running":
            run.cancel_requested_at_ms = run.cancel_requested_at_ms or now
            run.updated_at_ms = now
            return run.state
        if run.state not in ("queued", "sleeping"):
            raise _wrong_state(run, "cancelled", "queued, sleeping or running")
        run.state, run.finished_at_ms, run.updated_at_ms = "cancelled", now, now
        run.last_error = CANCELLED_BY_OPERATOR
        return run.state

    async def throughput(self, since_ms: int) -> Mapping[str, int]:
        completed: dict[str, int] = {}
        for run in self._runs.by_id.values():
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

    def _ended(self) -> list[Run]:
        return [
            run
            for run in self._runs.by_id.values()
            if run.state in ("completed", "dead") and run.finished_at_ms is not None
        ]

    async def pause_queue(self, queue: str) -> None:
        self._runs.paused.add(check_name(queue, what="queue"))

    async def resume_queue(self, queue: str) -> None:
        self._runs.paused.discard(check_name(queue, what="queue"))

    def _existing(self, job_id: str) -> Run:
        run = self._runs.by_id.get(job_id)
        if run is None:
            raise run_not_found(job_id)
        return run


def _wrong_state(run: Run, action: str, allowed: str) -> Exception:
    return run_in_wrong_state(run.id, run.name, run.state, action, allowed)
