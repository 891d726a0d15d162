"""What ``ferry tasks list/show`` report per task: the declaration plus derived state.

Every instant is rendered in the task's own zone with that zone's offset at the instant
(``2026-03-09T03:00:00-04:00``; ``Z`` where the offset is zero), never a machine-local one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from ferry._scheduler.store import TaskTick
from ferry.tasks._declaration import TaskHandle


def task_status(
    task: TaskHandle,
    tick: TaskTick | None,
    *,
    paused: bool,
    now_ms: int,
    next_count: int | None = None,
) -> dict[str, Any]:
    """The descriptor, ``next``/``nextMs``, ``last``/``lastMs``/``lastFiredAtMs`` (null
    before the first fire) and ``paused``; with ``next_count``, also ``describe`` and
    ``nextOccurrences`` (what ``tasks show`` adds)."""
    upcoming = task.next_occurrences(max(next_count or 0, 1), after_ms=now_ms)
    last_ms = tick.last_occurrence_ms if tick is not None else None
    status: dict[str, Any] = {
        **task.describe(),
        "nextMs": upcoming[0],
        "next": render_instant(upcoming[0], task.zone),
        "lastMs": last_ms,
        "last": render_instant(last_ms, task.zone) if last_ms is not None else None,
        "lastFiredAtMs": tick.last_fired_at_ms if tick is not None else None,
        "paused": paused,
    }
    if next_count is not None:
        status["describe"] = task.describe_schedule()
        status["nextOccurrences"] = [
            {"ms": instant, "at": render_instant(instant, task.zone)}
            for instant in upcoming[:next_count]
        ]
    return status


def render_instant(instant_ms: int, zone: ZoneInfo) -> str:
    """An instant as ISO 8601 wall time in ``zone`` with its offset (``Z`` for zero)."""
    text = datetime.fromtimestamp(instant_ms / 1000, zone).isoformat(timespec="seconds")
    return text.removesuffix("+00:00") + "Z" if text.endswith("+00:00") else text
