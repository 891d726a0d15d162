"""Values to script arguments and replies back to ferry's values.

Arguments cross as strings; an optional one is ``""`` when absent and ``"=" + value`` when
present (``lua/lib.lua``'s ``opt``), so an empty string stays distinguishable from none.
"""

from __future__ import annotations

import json
from typing import Any

from ferry._payload import json_text
from ferry.drivers.protocol import JobError, JsonValue, Progress, StepRecord

__all__ = ["from_json_text", "json_text", "opt", "optional_int", "progress_args"]


def opt(value: object) -> str:
    """An optional script argument."""
    return "" if value is None else f"={value}"


def progress_args(progress: Progress | None) -> tuple[str, str]:
    """``(current, total)`` as optional arguments; absent leaves the stored progress."""
    return ("", "") if progress is None else (opt(progress.current), opt(progress.total))


def from_json_text(text: str | None) -> JsonValue:
    """A stored JSON text's value (absent reads as ``None``)."""
    return None if text is None else json.loads(text)


def optional_int(value: str | None) -> int | None:
    """A stored integer field, if present."""
    return None if value is None else int(value)


def progress_of(run: dict[str, str]) -> Progress | None:
    """The run's last reported progress, if any."""
    current, total = run.get("pcur"), run.get("ptot")
    return None if current is None or total is None else Progress(int(current), int(total))


def error_of(code: str | None, message: str | None) -> JobError | None:
    """The run's last error, if it has one."""
    return None if code is None else JobError(code, message or "")


def step_document(step: StepRecord) -> str:
    """One step as the JSON text stored under its name in the run's steps hash."""
    return json_text(
        {
            "kind": step.kind,
            "result": step.result,
            "started_at_ms": step.started_at_ms,
            "finished_at_ms": step.finished_at_ms,
            "wake_at_ms": step.wake_at_ms,
        }
    )


def steps_of(stored: dict[str, str]) -> list[StepRecord]:
    """A run's stored steps (``"<n>|<document>"`` by name) in the order they started, ties
    in the order they were recorded."""
    steps = []
    for name, value in stored.items():
        recorded, _, document = value.partition("|")
        fields: dict[str, Any] = json.loads(document)
        steps.append((fields["started_at_ms"], int(recorded), StepRecord(name=name, **fields)))
    return [step for _, _, step in sorted(steps, key=lambda s: s[:2])]
