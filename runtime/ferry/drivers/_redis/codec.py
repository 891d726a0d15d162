"""Values to script arguments and replies back to ferry's values.

Arguments cross as strings; an optional one is ``""`` when absent and ``"=" + value`` when
present (``lua/lib.lua``'s ``opt``), so an empty string stays distinguishable from none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ferry.drivers._columns import json_text, stored_columns
from ferry.drivers.protocol import EnqueueRequest

__all__ = [
    "columns_of",
    "json_text",
    "opt",
    "request_args",
]


def opt(value: object) -> str:
    """An optional script argument."""
    return "" if value is None else f"={value}"


def request_args(r: EnqueueRequest) -> list[str]:
    """One enqueue request as the ``enqueue`` (and ``enqueue_children``) script's 12
    arguments: its stored columns (``_columns.stored_columns``), each an ``opt``."""
    return [opt(value) for value in stored_columns(r).values()]


_COLUMNS = {
    "key": "idempotency_key",
    "ckey": "concurrency_key",
    "rkey": "rate_key",
    "rdef": "rate_deferred_until_ms",
    "run_at": "run_at_ms",
    "created": "created_at_ms",
    "updated": "updated_at_ms",
    "lease": "lease_expires_at_ms",
    "finished": "finished_at_ms",
    "cancel_req": "cancel_requested_at_ms",
    "err_code": "last_error_code",
    "err_msg": "last_error_message",
    "pcur": "progress_current",
    "ptot": "progress_total",
    "parent": "parent_id",
    "pending": "children_pending",
    "tp": "traceparent",
}
"""A run hash's fields by the column names of the SQL drivers (the others are alike)."""
_INTEGERS = {
    "attempts", "max_attempts", "priority", "run_at_ms", "created_at_ms", "updated_at_ms",
    "lease_expires_at_ms", "finished_at_ms", "cancel_requested_at_ms", "progress_current",
    "progress_total", "children_pending", "rate_deferred_until_ms",
}  # fmt: skip
_OPTIONAL = (
    "tenant", "actor", "concurrency_key", "locked_by", "lease_expires_at_ms", "result",
    "last_error_code", "last_error_message", "progress_current", "progress_total",
    "finished_at_ms", "cancel_requested_at_ms", "failures", "traceparent", "rate_key",
    "rate_deferred_until_ms",
)  # fmt: skip


def columns_of(job_id: str, run: Mapping[str, Any]) -> dict[str, Any]:
    """A run as Redis keeps it (its hash, or a script's reply named alike) as the columns
    ``ferry.drivers._columns.run_of`` reads: the SQL drivers' names, integers as integers,
    an absent optional field as None."""
    columns: dict[str, Any] = dict.fromkeys(_OPTIONAL)
    for field, value in run.items():
        name = _COLUMNS.get(field, field)
        columns[name] = int(value) if name in _INTEGERS and value is not None else value
    columns["id"] = job_id
    return columns
