"""Conversions between ferry's values and the columns that store them, for every SQL driver.

The Postgres and SQLite tables have the same columns, so a row of either (an asyncpg
``Record``, a ``sqlite3.Row``: both are read by column name) becomes a value here, once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

# The facade's own serialisation: a payload the facade already serialised is stored as it
# is, and the SQL reads JSON text, so no connection needs a codec.
from ferry._payload import json_text
from ferry.drivers.protocol import (
    JOB_STATES,
    BackfillCheckpoint,
    ClaimedJob,
    JobError,
    JobState,
    JsonValue,
    Progress,
    QueueStats,
    RunDetail,
    RunLatency,
    RunSummary,
    StepRecord,
)

__all__ = [
    "Row",
    "array_columns",
    "checkpoint_of",
    "claimed_of",
    "detail_of",
    "from_json_text",
    "job_error_of",
    "json_text",
    "latency_of",
    "progress_columns",
    "progress_of",
    "queue_stats_of",
    "run_pk",
    "step_columns",
    "step_of",
    "summary_of",
]

_BIGINT_MAX = 2**63 - 1


class Row(Protocol):
    """A result row read by column name."""

    def __getitem__(self, key: str, /) -> Any: ...


def array_columns(rows: Iterable[tuple[Any, ...]]) -> list[list[Any]]:
    """Rows turned into one list per column: the arrays a Postgres batch statement unnests."""
    return [list(column) for column in zip(*rows, strict=True)]


def from_json_text(text: str | None) -> JsonValue:
    """The value of a JSON column read as text (SQL NULL reads as ``None``)."""
    return None if text is None else json.loads(text)


def run_pk(job_id: str) -> int | None:
    """The row id a run id names, or None when it cannot name a row (then no run has it)."""
    if not (job_id.isascii() and job_id.isdigit()) or len(job_id) > len(str(_BIGINT_MAX)):
        return None
    pk = int(job_id)
    return pk if str(pk) == job_id and 0 < pk <= _BIGINT_MAX else None


def progress_columns(progress: Progress | None) -> tuple[int | None, int | None]:
    """``(progress_current, progress_total)``; NULLs leave the stored progress as it was."""
    return (None, None) if progress is None else (progress.current, progress.total)


def progress_of(current: int | None, total: int | None) -> Progress | None:
    """The stored progress, if any was ever reported."""
    return None if current is None or total is None else Progress(current, total)


def job_error_of(code: str | None, message: str | None) -> JobError | None:
    """The stored last error, if the run has one."""
    return None if code is None else JobError(code, message or "")


def summary_of(row: Row) -> RunSummary:
    """A ``jobs`` row (``id`` as text) as a list shows it."""
    return RunSummary(
        id=row["id"],
        name=row["name"],
        queue=row["queue"],
        state=row["state"],
        attempts=row["attempts"],
        max_attempts=row["max_attempts"],
        tenant=row["tenant"],
        run_at_ms=row["run_at_ms"],
        created_at_ms=row["created_at_ms"],
        updated_at_ms=row["updated_at_ms"],
        last_error=job_error_of(row["last_error_code"], row["last_error_message"]),
    )


def claimed_of(row: Row, *, slot_held: bool) -> ClaimedJob:
    """A claimed ``jobs`` row (``id`` and ``payload`` as text) as the worker gets it."""
    return ClaimedJob(
        id=row["id"],
        name=row["name"],
        queue=row["queue"],
        payload=from_json_text(row["payload"]),
        idempotency_key=row["idempotency_key"],
        attempt=row["attempts"],
        max_attempts=row["max_attempts"],
        tenant=row["tenant"],
        actor=row["actor"],
        concurrency_key=row["concurrency_key"],
        run_at_ms=row["run_at_ms"],
        created_at_ms=row["created_at_ms"],
        lease_expires_at_ms=row["lease_expires_at_ms"],
        slot_held=slot_held,
    )


def detail_of(row: Row, steps: Sequence[StepRecord]) -> RunDetail:
    """A ``run_get`` row (``payload`` and ``result`` as text) with its steps."""
    return RunDetail(
        summary=summary_of(row),
        payload=from_json_text(row["payload"]),
        idempotency_key=row["idempotency_key"],
        actor=row["actor"],
        concurrency_key=row["concurrency_key"],
        locked_by=row["locked_by"],
        lease_expires_at_ms=row["lease_expires_at_ms"],
        result=from_json_text(row["result"]),
        progress=progress_of(row["progress_current"], row["progress_total"]),
        finished_at_ms=row["finished_at_ms"],
        steps=tuple(steps),
        cancel_requested_at_ms=row["cancel_requested_at_ms"],
    )


def step_columns(step: StepRecord) -> tuple[str, str, str, int, int, int | None]:
    """A step as the steps table's columns, from ``name`` to ``wake_at_ms``."""
    return (
        step.name,
        step.kind,
        json_text(step.result),
        step.started_at_ms,
        step.finished_at_ms,
        step.wake_at_ms,
    )


def step_of(row: Row) -> StepRecord:
    """A ``steps`` row (``result`` as text) as the step it records."""
    return StepRecord(
        name=row["name"],
        kind=row["kind"],
        result=from_json_text(row["result"]),
        started_at_ms=row["started_at_ms"],
        finished_at_ms=row["finished_at_ms"],
        wake_at_ms=row["wake_at_ms"],
    )


def checkpoint_of(row: Row) -> BackfillCheckpoint:
    """A ``backfills`` row (``cursor`` as text) as the checkpoint it saved."""
    return BackfillCheckpoint(
        key=row["key"],
        cursor=from_json_text(row["cursor"]),
        processed=row["processed"],
        pages=row["pages"],
        done=bool(row["done"]),
        updated_at_ms=row["updated_at_ms"],
    )


def latency_of(row: Row) -> RunLatency:
    """A ``recent_latencies`` row."""
    return RunLatency(
        id=row["id"],
        queue=row["queue"],
        name=row["name"],
        state=row["state"],
        finished_at_ms=row["finished_at_ms"],
        latency_ms=row["latency_ms"],
    )


def queue_stats_of(rows: Iterable[Row]) -> list[QueueStats]:
    """The ``queue_stats`` rows (a count per queue and state, a row per paused queue) as
    each queue's counts — every state present — by queue name."""
    counts: dict[str, dict[JobState, int]] = {}
    paused: set[str] = set()
    oldest: dict[str, int] = {}
    for row in rows:
        per_queue = counts.setdefault(row["queue"], dict.fromkeys(JOB_STATES, 0))
        if row["paused"]:
            paused.add(row["queue"])
        else:
            per_queue[row["state"]] = row["runs"]
            if row["oldest_due_at_ms"] is not None:
                oldest[row["queue"]] = row["oldest_due_at_ms"]
    return [
        QueueStats(queue, state_counts, queue in paused, oldest.get(queue))
        for queue, state_counts in sorted(counts.items())
    ]
