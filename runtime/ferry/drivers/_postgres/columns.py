"""Conversions between ferry's values and the columns that store them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import asyncpg

# The facade's own serialisation: the SQL casts the text to jsonb, so no connection needs
# a codec, and a payload the facade already serialised is stored as it is.
from ferry._payload import json_text
from ferry.drivers.protocol import JobError, JsonValue, Progress, StepRecord

__all__ = [
    "array_columns",
    "from_json_text",
    "job_error_of",
    "json_text",
    "progress_of",
    "run_pk",
    "step_columns",
    "step_of",
]

_BIGINT_MAX = 2**63 - 1


def array_columns(rows: Iterable[tuple[Any, ...]]) -> list[list[Any]]:
    """Rows turned into one list per column: the arrays a batch statement unnests."""
    return [list(column) for column in zip(*rows, strict=True)]


def from_json_text(text: str | None) -> JsonValue:
    """The value of a jsonb column read as text (SQL NULL reads as ``None``)."""
    return None if text is None else json.loads(text)


def run_pk(job_id: str) -> int | None:
    """The row id a run id names, or None when it cannot name a row (then no run has it)."""
    if not (job_id.isascii() and job_id.isdigit()):
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


def step_of(row: asyncpg.Record) -> StepRecord:
    """A step as ``step_load`` reads it."""
    return StepRecord(
        name=row["name"],
        kind=row["kind"],
        result=from_json_text(row["result"]),
        started_at_ms=row["started_at_ms"],
        finished_at_ms=row["finished_at_ms"],
        wake_at_ms=row["wake_at_ms"],
    )
