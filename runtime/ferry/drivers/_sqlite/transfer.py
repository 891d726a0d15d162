"""``RunTransfer`` on SQLite: each call is one transaction under the file's write lock.

Read the statements in ``sql/queries/transfer_*.sql``; the ``moving`` state and its columns
are in migration 0001.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from ferry.drivers._columns import (
    from_json_text,
    json_text,
    progress_columns,
    run_of,
    run_pk,
    step_of,
)
from ferry.drivers._sqlite.database import Database
from ferry.drivers._sqlite.steps import step_parameters
from ferry.drivers._transfer import answer_for
from ferry.drivers.protocol import ImportResult, MovedRun, StepRecord


class SqliteTransfer:
    """Moves runs into and out of one file (see ``RunTransfer``); ``woke`` wakes this
    process's idle workers when runs come in due (other processes see the commit)."""

    def __init__(self, database: Database, woke: Callable[[], None]) -> None:
        self._db = database
        self._woke = woke

    async def reserve(
        self,
        drain_id: str,
        *,
        target: str,
        limit: int,
        queues: Sequence[str] | None = None,
        include_dead: bool = False,
    ) -> list[MovedRun]:
        queries = self._db.queries
        parameters = {
            "drain_id": drain_id,
            "target": target,
            "limit": max(limit, 0),
            "queues": json.dumps(list(queues)) if queues is not None else None,
            "include_dead": include_dead,
        }

        def reserve(c: sqlite3.Connection) -> list[MovedRun]:
            rows = c.execute(
                queries["transfer_reserve"], {**parameters, "now": self._db.clock.now_ms()}
            ).fetchall()
            steps: dict[str, list[StepRecord]] = {row["id"]: [] for row in rows}
            ids = json.dumps([row["pk"] for row in rows])
            for step in c.execute(queries["steps_of_runs"], {"ids": ids}):
                steps[step["job_id"]].append(step_of(step))
            return [
                run_of(MovedRun, row, state=row["moving_from"], steps=tuple(steps[row["id"]]))
                for row in sorted(rows, key=_pk)
            ]

        return await self._db.transaction(reserve)

    async def import_runs(self, runs: Sequence[MovedRun]) -> list[ImportResult]:
        if not runs:
            return []
        queries = self._db.queries
        firsts: dict[str, MovedRun] = {}
        for run in runs:
            firsts.setdefault(run.idempotency_key, run)

        def write(c: sqlite3.Connection) -> tuple[dict[str, ImportResult], bool]:
            now = self._db.clock.now_ms()
            batch = json.dumps([_run_row(run) for run in firsts.values()])
            found: dict[str, ImportResult] = {}
            due = False
            for row in c.execute(queries["transfer_import"], {"batch": batch, "now": now}):
                found[row["idempotency_key"]] = ImportResult("imported", row["id"])
                due = due or (row["state"] == "queued" and row["run_at_ms"] <= now)
            for key, result in found.items():
                for step in firsts[key].steps:
                    c.execute(queries["step_record"], step_parameters(run_pk(result.job_id), step))
            skipped = [key for key in firsts if key not in found]
            if skipped:  # under the write lock: a skipped key's holder is there to judge
                for row in c.execute(queries["transfer_existing"], {"keys": json.dumps(skipped)}):
                    found[row["idempotency_key"]] = _judged(row, firsts[row["idempotency_key"]])
            return found, due

        found, due = await self._db.transaction(write)
        if due:
            self._woke()
        return [
            answer_for(found[run.idempotency_key], firsts[run.idempotency_key], run) for run in runs
        ]

    async def remove(self, drain_id: str, job_ids: Sequence[str]) -> list[str]:
        rows = await self._fenced("transfer_remove", drain_id, job_ids)
        return [row["id"] for row in rows]

    async def release(self, drain_id: str, job_ids: Sequence[str]) -> list[str]:
        rows = await self._fenced("transfer_release", drain_id, job_ids)
        now = self._db.clock.now_ms()
        if any(row["state"] == "queued" and row["run_at_ms"] <= now for row in rows):
            self._woke()
        return [row["id"] for row in rows]

    async def _fenced(self, query: str, drain_id: str, job_ids: Sequence[str]) -> list[sqlite3.Row]:
        pks = [pk for pk in map(run_pk, job_ids) if pk is not None]
        if not pks:
            return []
        parameters = {"drain_id": drain_id, "ids": json.dumps(pks), "now": self._db.clock.now_ms()}
        rows = await self._db.execute(query, parameters)
        return sorted(rows, key=lambda row: int(row["id"]))


def _pk(row: sqlite3.Row) -> int:
    return int(row["pk"])


def _judged(holder: sqlite3.Row, run: MovedRun) -> ImportResult:
    """``present`` when ``holder`` is ``run`` itself (already imported), else ``collision``
    (a different run, or one ``moving`` off this store: then both "stores" are one)."""
    same = holder["state"] != "moving" and (
        holder["name"],
        holder["queue"],
        from_json_text(holder["payload"]),
        holder["created_at_ms"],
    ) == (run.name, run.queue, run.payload, run.created_at_ms)
    return ImportResult("present" if same else "collision", holder["id"])


def _run_row(run: MovedRun) -> dict[str, Any]:
    """One run as ``transfer_import``'s batch element."""
    error = run.last_error
    current, total = progress_columns(run.progress)
    return {
        "name": run.name,
        "queue": run.queue,
        "payload": json_text(run.payload),
        "idempotency_key": run.idempotency_key,
        "state": run.state,
        "attempts": run.attempts,
        "max_attempts": run.max_attempts,
        "priority": run.priority,
        "run_at_ms": run.run_at_ms,
        "tenant": run.tenant,
        "actor": run.actor,
        "concurrency_key": run.concurrency_key,
        "last_error_code": error.code if error is not None else None,
        "last_error_message": error.message if error is not None else None,
        "progress_current": current,
        "progress_total": total,
        "created_at_ms": run.created_at_ms,
        "finished_at_ms": run.finished_at_ms,
    }
