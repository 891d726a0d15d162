"""Conversions between ferry's values and the columns that store them, for every SQL driver.

The Postgres and SQLite tables have the same columns, so a row of either (an asyncpg
``Record``, a ``sqlite3.Row``: both are read by column name) becomes a value here, once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import MISSING, Field, fields
from operator import itemgetter
from typing import Any, Protocol, TypeVar

# The facade's own serialisation: a payload the facade already serialised is stored as it
# is, and the SQL reads JSON text, so no connection needs a codec.
from ferry._payload import json_text
from ferry.drivers.failures import failures_of
from ferry.drivers.protocol import (
    JOB_STATES,
    AckOptions,
    ClaimedJob,
    EnqueueRequest,
    JobError,
    JobState,
    JsonValue,
    MovedRun,
    NackOptions,
    Progress,
    QueueStats,
    RunDetail,
    RunLatency,
    RunStatus,
    RunSummary,
    StepRecord,
)
from ferry.drivers.settle import SettleFields, transition

__all__ = [
    "Row",
    "array_columns",
    "from_json_text",
    "job_error_of",
    "json_text",
    "latency_of",
    "prefix_upper_bound",
    "progress_columns",
    "progress_of",
    "queue_stats_of",
    "run_of",
    "run_pk",
    "settle_columns",
    "step_columns",
    "step_of",
    "stored_columns",
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


def prefix_upper_bound(prefix: str) -> str | None:
    """The least string above every string that starts with ``prefix`` (code point order,
    which a UTF-8 ``BINARY``/``C`` comparison follows): ``prefix <= key < bound`` is
    ``key.startswith(prefix)``, as a range an index serves. None when no string is above
    them all (an empty prefix, or one of U+10FFFF only)."""
    head = prefix
    while head:
        last = ord(head[-1])
        if last < 0x10FFFF:
            step = last + 1 if last + 1 not in range(0xD800, 0xE000) else 0xE000
            return head[:-1] + chr(step)
        head = head[:-1]
    return None


def progress_columns(progress: Progress | None) -> tuple[int | None, int | None]:
    """``(progress_current, progress_total)``; NULLs leave the stored progress as it was."""
    return (None, None) if progress is None else (progress.current, progress.total)


def progress_of(current: int | None, total: int | None) -> Progress | None:
    """The stored progress, if any was ever reported."""
    return None if current is None or total is None else Progress(current, total)


def job_error_of(code: str | None, message: str | None) -> JobError | None:
    """The stored last error, if the run has one."""
    return None if code is None else JobError(code, message or "")


RunValue = TypeVar("RunValue", RunSummary, RunDetail, RunStatus, ClaimedJob, MovedRun, SettleFields)

_READ: dict[str, Callable[[Row], Any]] = {
    "id": lambda row: str(row["id"]),
    "payload": lambda row: from_json_text(row["payload"]),
    "payload_json": itemgetter("payload"),
    "result": lambda row: from_json_text(row["result"]),
    "attempt": itemgetter("attempts"),
    "last_error": lambda row: job_error_of(row["last_error_code"], row["last_error_message"]),
    "progress": lambda row: progress_of(row["progress_current"], row["progress_total"]),
    "summary": lambda row: run_of(RunSummary, row),
    "failures": lambda row: failures_of(row["failures"]),
}
"""How a value's field reads its stored columns, where that is not the column of its name
(``payload`` is JSON text, decoded but for a claimed run's ``payload_json``, ``last_error``
two columns, ``attempt`` the ``attempts`` count)."""


def run_of(kind: type[RunValue], row: Row, **given: Any) -> RunValue:
    """A run as any of its values — a list's ``RunSummary``, a ``RunDetail``, a
    ``RunStatus``, a worker's ``ClaimedJob``, a drain's ``MovedRun``, the ``SettleFields``
    a settle decides on — from one stored row, by the value's own field names; ``given``
    supplies what is not a column (the steps, the children, ``slot_held``).

    This is the one place a run's columns become values: a new column is a field on the
    value type and the column in the statements (Redis: its hash field in ``lua/lib.lua``'s
    ``run_columns``), and every driver reads it. It runs once per claimed run on the
    worker's hot path, so each value type's readers are worked out once."""
    readers, optional = _PLANS.get(kind) or _plan(kind)
    values = {name: given[name] if name in given else read(row) for name, read in readers}
    for name in optional:
        if name in given:
            values[name] = given[name]
        elif _has(row, name):
            values[name] = row[name]
    return kind(**values)


_Plan = tuple[tuple[tuple[str, Callable[[Row], Any]], ...], tuple[str, ...]]
_PLANS: dict[type[Any], _Plan] = {}
"""Each value type's readers, worked out on its first row."""


def _plan(kind: type[Any]) -> _Plan:
    """The fields every row must give (no default, or a reader of their own), each with how
    it is read; then the defaulted fields read only when the row (or ``given``) has them."""
    plan = (
        tuple(
            (f.name, _READ.get(f.name, itemgetter(f.name)))
            for f in fields(kind)
            if f.name in _READ or _required(f)
        ),
        tuple(f.name for f in fields(kind) if f.name not in _READ and not _required(f)),
    )
    _PLANS[kind] = plan
    return plan


def _required(f: Field[Any]) -> bool:
    """A field with no default (nor a default factory): every row must have its column."""
    return f.default is MISSING and f.default_factory is MISSING


def _has(row: Row, name: str) -> bool:
    try:
        row[name]
    except (KeyError, IndexError):
        return False
    return True


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
    due: dict[str, int] = {}
    for row in rows:
        per_queue = counts.setdefault(row["queue"], dict.fromkeys(JOB_STATES, 0))
        due[row["queue"]] = due.get(row["queue"], 0) + row["due"]
        if row["paused"]:
            paused.add(row["queue"])
        else:
            per_queue[row["state"]] = row["runs"]
            if row["oldest_due_at_ms"] is not None:
                oldest[row["queue"]] = row["oldest_due_at_ms"]
    return [
        QueueStats(queue, state_counts, queue in paused, oldest.get(queue), due[queue])
        for queue, state_counts in sorted(counts.items())
    ]


def _payload(value: Any) -> dict[str, Any]:
    given = getattr(value, "payload_json", None)  # an enqueue's, serialised once by the facade
    return {"payload": given if given is not None else json_text(value.payload)}


def _last_error(value: Any) -> dict[str, Any]:
    error = value.last_error
    return {
        "last_error_code": error.code if error is not None else None,
        "last_error_message": error.message if error is not None else None,
    }


def _progress(value: Any) -> dict[str, Any]:
    current, total = progress_columns(value.progress)
    return {"progress_current": current, "progress_total": total}


_WRITE: dict[str, Callable[[Any], dict[str, Any]]] = {
    "payload": _payload,
    "last_error": _last_error,
    "progress": _progress,
}
"""How a value's field is stored, where that is not the column of its name: ``_READ``
backwards (``payload`` as JSON text, ``last_error`` and ``progress`` two columns each)."""

_NOT_STORED = frozenset({"id", "steps", "connection", "payload_json", "dedupe"})
"""Fields that are no column of the run: its id (the store gives it), a moved run's
steps (their own rows), a request's transaction, its payload's text (``payload``) and its
dedupe rule (what the enqueue does with a key's stored run, ``enqueue_supersede``)."""

_STORED: dict[type[Any], tuple[str, ...]] = {}


def stored_columns(value: EnqueueRequest | MovedRun) -> dict[str, Any]:
    """A run's value as the columns that store it — ``run_of`` backwards — by the value's
    own field names, in their order: the order every driver's enqueue and import take
    them (Postgres: an array each; SQLite: a JSON object per run; Redis: script
    arguments). The one mapping of an ``EnqueueRequest`` and of a ``MovedRun`` to a stored
    row: a new column is a field on the value type and the column in the SQL/Lua."""
    kind = type(value)
    names = _STORED.get(kind)
    if names is None:
        names = _STORED[kind] = tuple(f.name for f in fields(kind) if f.name not in _NOT_STORED)
    columns: dict[str, Any] = {}
    for name in names:
        if name in _WRITE:
            columns.update(_WRITE[name](value))
        else:
            columns[name] = getattr(value, name)
    return columns


def settle_columns(settle: AckOptions | NackOptions, now_ms: int) -> dict[str, Any]:
    """One settle as a store's settle statement takes it, by name, in order: the decisions
    of ``transition`` (the planned state, the attempt given back, whether it requeues,
    whether it finishes) and the values the run keeps, an ack's result as the JSON value it
    is, progress as ``stored_columns`` stores it. Postgres sends them as one JSON batch and
    Redis as script arguments; SQLite applies ``settle_run`` to the row itself."""
    planned = transition(settle)
    if isinstance(settle, AckOptions):
        run_at_ms, result, error, failure = None, settle.result, None, None
    else:
        run_at_ms = now_ms if settle.run_at_ms is None else settle.run_at_ms
        result, error, failure = None, settle.error, settle.failure
    return {
        "worker_id": settle.worker_id,
        "state": planned.state,
        "attempts_given_back": 1 if planned.gives_back_attempt else 0,
        "requeues": planned.requeues,
        "finishes": planned.finishes,
        "run_at_ms": run_at_ms,
        "result": result,
        "error_code": error.code if error is not None else None,
        "error_message": error.message if error is not None else None,
        **_progress(settle),
        "failure": failure,
    }
