"""``RunTransfer`` on Redis: a batch is reserved, imported, removed or released by one
script (``lua/transfer_*.lua``), atomic on the server.

A reserved run is ``moving``: out of the claim index, in ``{prefix}:moving:<target>`` (so a
rerun to the same target finds what an interrupted drain left), held by the drain's id in
``locked_by``, with the state it had in ``moving_from``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ferry._clock import Clock
from ferry.drivers._columns import run_of
from ferry.drivers._redis.codec import (
    columns_of,
    from_json_text,
    json_text,
    opt,
    progress_args,
    step_document,
    steps_of,
)
from ferry.drivers._redis.connection import Connection
from ferry.drivers._redis.keyspace import run_id
from ferry.drivers._transfer import answer_for
from ferry.drivers.protocol import ImportResult, MovedRun

_MOVED = (
    "name", "queue", "payload", "key", "moving_from", "attempts", "max_attempts", "priority",
    "run_at", "tenant", "actor", "ckey", "err_code", "err_msg", "pcur", "ptot", "created",
    "finished",
)  # fmt: skip
"""The fields ``transfer_reserve`` answers after the id, in order."""


class RedisTransfer:
    """Moves runs into and out of one prefix (see ``RunTransfer``)."""

    def __init__(self, connection: Connection, clock: Clock) -> None:
        self._connection = connection
        self._clock = clock

    async def reserve(
        self,
        drain_id: str,
        *,
        target: str,
        limit: int,
        queues: Sequence[str] | None = None,
        include_dead: bool = False,
    ) -> list[MovedRun]:
        if queues is not None and not queues:
            return []
        rows = await self._connection.run(
            "transfer_reserve",
            drain_id,
            target,
            max(limit, 0),
            self._clock.now_ms(),
            "1" if include_dead else "0",
            *(queues or ()),
        )
        stored = await self._connection.commands(
            *(("HGETALL", self._connection.keys("steps", row[0])) for row in rows)
        )
        moved = [_moved(row, steps) for row, steps in zip(rows, stored, strict=True)]
        return sorted(moved, key=lambda run: int(run.id))

    async def import_runs(self, runs: Sequence[MovedRun]) -> list[ImportResult]:
        if not runs:
            return []
        firsts: dict[str, MovedRun] = {}
        for run in runs:
            firsts.setdefault(run.idempotency_key, run)
        args: list[str | int] = [self._clock.now_ms(), len(firsts)]
        for run in firsts.values():
            args += _import_args(run)
        answers = await self._connection.run("transfer_import", *args)
        found = {
            run.idempotency_key: _judged(run, answer)
            for run, answer in zip(firsts.values(), answers, strict=True)
        }
        return [
            answer_for(found[run.idempotency_key], firsts[run.idempotency_key], run) for run in runs
        ]

    async def remove(self, drain_id: str, job_ids: Sequence[str]) -> list[str]:
        known = _known(job_ids)
        if not known:
            return []
        return [str(i) for i in await self._connection.run("transfer_remove", drain_id, *known)]

    async def release(self, drain_id: str, job_ids: Sequence[str]) -> list[str]:
        known = _known(job_ids)
        if not known:
            return []
        released = await self._connection.run(
            "transfer_release", drain_id, self._clock.now_ms(), *known
        )
        return [str(i) for i in released]


def _known(job_ids: Sequence[str]) -> list[str]:
    return [i for i in dict.fromkeys(job_ids) if run_id(i) is not None]


def _import_args(run: MovedRun) -> list[str | int]:
    """One run as ``transfer_import``'s arguments, in order."""
    error = run.last_error
    args: list[str | int] = [
        run.name,
        run.queue,
        json_text(run.payload),
        run.idempotency_key,
        run.state,
        run.attempts,
        run.max_attempts,
        run.priority,
        run.run_at_ms,
        opt(run.tenant),
        opt(run.actor),
        opt(run.concurrency_key),
        opt(error.code if error is not None else None),
        opt(error.message if error is not None else None),
        *progress_args(run.progress),
        run.created_at_ms,
        opt(run.finished_at_ms),
        len(run.steps),
    ]
    for step in run.steps:
        args += [step.name, step_document(step)]
    return args


def _judged(run: MovedRun, answer: list[Any]) -> ImportResult:
    """``imported``, or — the key was held — ``present`` when the holder is this same run
    (equal identity: name, queue, payload, created) and not itself moving, else
    ``collision``."""
    if answer[0] == "imported":
        return ImportResult("imported", str(answer[1]))
    _, holder, state, name, queue, payload, created = answer
    same = (
        state != "moving"
        and (name, queue, created) == (run.name, run.queue, str(run.created_at_ms))
        and from_json_text(payload) == run.payload
    )
    return ImportResult("present" if same else "collision", str(holder))


def _moved(row: list[Any], steps: dict[str, str]) -> MovedRun:
    job_id, *values = row
    columns = columns_of(str(job_id), dict(zip(_MOVED, values, strict=True)))
    return run_of(MovedRun, columns, state=columns["moving_from"], steps=tuple(steps_of(steps)))
