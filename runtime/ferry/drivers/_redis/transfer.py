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
from ferry.drivers._columns import run_of, stored_columns
from ferry.drivers._redis.codec import (
    columns_of,
    opt,
    step_document,
    steps_of,
)
from ferry.drivers._redis.connection import Connection
from ferry.drivers._redis.keyspace import run_id
from ferry.drivers._transfer import imported, judged
from ferry.drivers.protocol import ImportResult, MovedRun

_MOVED = (
    "name", "queue", "payload", "key", "moving_from", "attempts", "max_attempts", "priority",
    "run_at", "tenant", "actor", "ckey", "err_code", "err_msg", "pcur", "ptot", "created",
    "finished", "rkey",
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
        return await imported(runs, self._write)

    async def _write(self, runs: list[MovedRun]) -> dict[str, ImportResult]:
        args: list[str | int] = [self._clock.now_ms(), len(runs)]
        for run in runs:
            args += _import_args(run)
        answers = await self._connection.run("transfer_import", *args)
        return {run.idempotency_key: _judged(run, a) for run, a in zip(runs, answers, strict=True)}

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
    """One run as ``transfer_import``'s arguments: its columns, then its steps."""
    args: list[str | int] = [*map(opt, stored_columns(run).values()), len(run.steps)]
    for step in run.steps:
        args += [step.name, step_document(step)]
    return args


def _judged(run: MovedRun, answer: list[Any]) -> ImportResult:
    """``imported``, or — the key was held — the holder ``judged``."""
    if answer[0] == "imported":
        return ImportResult("imported", str(answer[1]))
    _, holder, state, name, queue, payload, created = answer
    held = {"id": holder, "state": state, "name": name, "queue": queue, "payload": payload}
    return judged({**held, "created_at_ms": int(created)}, run)


def _moved(row: list[Any], steps: dict[str, str]) -> MovedRun:
    job_id, *values = row
    columns = columns_of(str(job_id), dict(zip(_MOVED, values, strict=True)))
    return run_of(MovedRun, columns, state=columns["moving_from"], steps=tuple(steps_of(steps)))
