"""``JobIntrospection`` on Redis: what ``ferry jobs`` and the dashboard read and do.

Reads go through indexes, never a scan of every run: a listing walks the smallest index
its filter allows (every run, a queue's, a job's, a state's or a tenant's runs, each a
sorted set by id) in short script steps; charts and latencies read the per-queue sets of
ended runs by finish instant; counts are kept per queue and state as runs move.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ferry._clock import Clock
from ferry._names import check_name
from ferry.drivers._columns import run_of
from ferry.drivers._containment import contains
from ferry.drivers._redis.codec import columns_of, opt, optional_int, steps_of
from ferry.drivers._redis.connection import Connection
from ferry.drivers._redis.keyspace import run_id
from ferry.drivers._refusals import OneRunActions
from ferry.drivers.fan_in import CANCELLED_WITH_PARENT
from ferry.drivers.protocol import (
    CHILDREN_SHOWN,
    JOB_STATES,
    JobState,
    OutcomeBucket,
    QueueStats,
    RunChange,
    RunDetail,
    RunFilter,
    RunLatency,
    RunSummary,
)
from ferry.drivers.settle import CANCELLED_BY_OPERATOR

LIST_STEP = 1_000
"""Runs one listing step examines at most: the bound on one script's work."""


class RedisIntrospection(OneRunActions):
    """Operator reads and actions over the run hashes and their indexes."""

    def __init__(self, connection: Connection, clock: Clock) -> None:
        self._connection = connection
        self._clock = clock

    async def list_runs(self, run_filter: RunFilter) -> Sequence[RunSummary]:
        f = run_filter
        if f.limit <= 0:
            return []
        below = f.before_id
        if below is not None and run_id(below) is None:
            return []
        above = f.after_id
        if above is not None and run_id(above) is None:
            return []
        index = await self._smallest_index(f)
        runs: list[RunSummary] = []
        now = self._clock.now_ms()
        pattern = json.loads(f.input_contains) if f.input_contains is not None else None
        searching = f.input_contains is not None  # decided here, a step of candidates at once
        while len(runs) < f.limit:
            matches, last = await self._connection.run(
                "runs_page",
                index,
                opt(below),
                LIST_STEP if searching else f.limit - len(runs),
                LIST_STEP,
                opt(f.queue),
                opt(f.name),
                opt("running" if f.lease_expired and f.state is None else f.state),
                opt(f.tenant),
                opt(f.created_after_ms),
                opt(f.created_before_ms),
                "1" if f.lease_expired else "0",
                now,
                opt(above),
                opt(f.key_prefix),
                opt(f.error_code),
                opt(f.error_text),
                opt(f.due_after_ms),
                opt(None if f.has_error is None else int(f.has_error)),
                "1" if searching else "0",
            )
            for row in matches:
                if searching and not contains(json.loads(row[-1]), pattern):
                    continue
                runs.append(_summary(row[:12]))
                if len(runs) == f.limit:
                    return runs
            if last is None:
                break
            below = last
        return runs

    async def _smallest_index(self, f: RunFilter) -> str:
        """The index with the fewest runs among those the filter allows."""
        keys = self._connection.keys
        state = "running" if f.lease_expired and f.state is None else f.state
        candidates = [keys("ix", "all")]
        for kind, value in (("q", f.queue), ("n", f.name), ("s", state), ("t", f.tenant)):
            if value is not None:
                candidates.append(keys("ix", kind, value))
        if len(candidates) == 1:
            return candidates[0]
        sizes = await self._connection.commands(*(("ZCARD", c) for c in candidates))
        return min(zip(sizes, candidates, strict=True))[1]

    async def get_run(self, job_id: str) -> RunDetail | None:
        known = run_id(job_id)
        if known is None:
            return None
        keys = self._connection.keys
        run, steps, children_count, child_ids = await self._connection.commands(
            ("HGETALL", keys("job", known)),
            ("HGETALL", keys("steps", known)),
            ("ZCARD", keys("children", known)),
            ("ZRANGE", keys("children", known), "0", str(CHILDREN_SHOWN - 1)),
        )
        if not run:
            return None
        children = (
            await self._connection.commands(
                *(("HMGET", keys("job", child), *_SUMMARY) for child in child_ids)
            )
            if child_ids
            else []
        )
        return run_of(
            RunDetail,
            columns_of(known, run),
            steps=tuple(steps_of(steps)),
            children_count=children_count,
            children=tuple(
                _summary([child, *values])
                for child, values in zip(child_ids, children, strict=True)
                if values[0] is not None  # pruned meanwhile
            ),
        )

    async def retry_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        return await self._change("run_retry", job_ids, self._clock.now_ms())

    async def cancel_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        return await self._change(
            "run_cancel",
            job_ids,
            self._clock.now_ms(),
            CANCELLED_BY_OPERATOR.code,
            CANCELLED_BY_OPERATOR.message,
            CANCELLED_WITH_PARENT.message,
        )

    async def delete_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]:
        return await self._change("run_delete", job_ids, self._clock.now_ms())

    async def throughput(self, since_ms: int) -> Mapping[str, int]:
        keys = self._connection.keys
        queues = sorted(await self._connection.command("SMEMBERS", keys("queues")))
        counts = await self._connection.commands(
            *(
                ("ZCOUNT", keys("fin", "completed", queue), f"({since_ms}", "+inf")
                for queue in queues
            )
        )
        return {queue: count for queue, count in zip(queues, counts, strict=True) if count}

    async def outcome_series(self, since_ms: int, bucket_ms: int) -> Sequence[OutcomeBucket]:
        rows = await self._connection.run("outcome_series", since_ms, bucket_ms)
        buckets: dict[tuple[str, int], list[int]] = {}
        for queue, state, start, count in rows:
            bucket = buckets.setdefault((queue, int(start)), [0, 0])
            bucket[0 if state == "completed" else 1] += int(count)
        return [
            OutcomeBucket(queue, start, completed, dead)
            for (queue, start), (completed, dead) in sorted(buckets.items())
        ]

    async def recent_latencies(self, limit: int) -> Sequence[RunLatency]:
        rows = await self._connection.run("recent_latencies", max(limit, 0))
        return [
            RunLatency(
                id=str(job_id),
                queue=queue,
                name=name,
                state=state,
                finished_at_ms=int(finished),
                latency_ms=max(int(finished) - int(run_at), 0),
            )
            for job_id, queue, name, state, finished, run_at in rows
        ]

    async def pause_queue(self, queue: str) -> None:
        check_name(queue, what="queue")
        await self._connection.commands(("SADD", self._connection.keys("paused"), queue))

    async def resume_queue(self, queue: str) -> None:
        check_name(queue, what="queue")
        await self._connection.commands(("SREM", self._connection.keys("paused"), queue))

    async def stats(self) -> list[QueueStats]:
        """Counts per queue and state (every state present), paused queues included."""
        rows = await self._connection.run("queue_stats", self._clock.now_ms())
        stats = []
        for queue, paused, oldest, due, pairs in rows:
            counts: dict[JobState, int] = dict.fromkeys(JOB_STATES, 0)
            for state, count in zip(pairs[::2], pairs[1::2], strict=True):
                counts[state] = int(count)
            stats.append(QueueStats(queue, counts, bool(paused), optional_int(oldest), int(due)))
        return stats

    async def _change(
        self, script: str, job_ids: Sequence[str], *first: str | int
    ) -> list[RunChange]:
        """Run a guarded many-run action script (``first`` its leading arguments, then the
        ids); answers a change per run found."""
        known = list(dict.fromkeys(k for k in (run_id(job_id) for job_id in job_ids) if k))
        if not known:
            return []
        rows = await self._connection.run(script, *first, *known)
        return [RunChange(str(i), name, state, bool(changed)) for i, name, state, changed in rows]


_SUMMARY = (
    "name", "queue", "state", "attempts", "max_attempts", "tenant", "run_at", "created",
    "updated", "err_code", "err_msg",
)  # fmt: skip
"""The fields ``runs_page`` answers after each run's id, in order."""


def _summary(row: list[str | None]) -> RunSummary:
    job_id, *values = row
    return run_of(RunSummary, columns_of(str(job_id), dict(zip(_SUMMARY, values, strict=True))))
