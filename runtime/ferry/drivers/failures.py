"""The failed attempts a run keeps: each one's code, instant and traceback, newest 16 kB.

Every failed attempt (one retried, or the one that left the run dead) appends a record to
the run's ``failures`` column in its settle statement, and the store keeps only the newest
``FAILURES_LIMIT`` characters of them: the oldest records fall off the front, so the column
is bounded however many attempts a run makes and the latest failures always stay. A record
is ``RS attempt US code US at_ms US traceback`` (ASCII record and unit separators, which a
record's text has escaped), so one that the bound cut mid-way is told apart from whole ones.
``ferry jobs show``, the run page and MCP read them back with ``failures_of``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ferry._storable import storable_message

FAILURES_LIMIT = 16_384
"""How many characters of failure records a run keeps (the newest)."""
_RECORD, _FIELD = "\x1e", "\x1f"
_HEAD_ROOM = 200
"""What a record's header (attempt, code, instant) may take of the limit."""


@dataclass(frozen=True, slots=True)
class AttemptFailure:
    """One failed attempt as the run keeps it."""

    attempt: int | None
    """1-based; None when the bound cut this record's start (with its header) off."""
    code: str | None
    at_ms: int | None
    traceback: str
    """The exception's traceback (or a refusal's ``code: message``): its end, when it was
    longer than the limit — the innermost frames and the exception itself."""
    cut: bool = False


def failure_record(*, attempt: int, code: str, at_ms: int, traceback: str) -> str:
    """The record one failed attempt appends (never longer than the limit)."""
    text = storable_message(traceback, limit=10 * FAILURES_LIMIT)
    text = text.replace(_RECORD, "\\x1e").replace(_FIELD, "\\x1f")
    room = FAILURES_LIMIT - _HEAD_ROOM
    if len(text) > room:
        text = "…" + text[-(room - 1) :]
    return f"{_RECORD}{attempt}{_FIELD}{code[:80]}{_FIELD}{at_ms}{_FIELD}{text}"


def failures_of(stored: str | None) -> tuple[AttemptFailure, ...]:
    """The records a run keeps, oldest first."""
    if not stored:
        return ()
    head, *records = stored.split(_RECORD)
    failures = [AttemptFailure(None, None, None, head, cut=True)] if head else []
    for record in records:
        parts = record.split(_FIELD, 3)
        if len(parts) == 4 and parts[0].isdigit() and parts[2].isdigit():
            attempt, code, at_ms, text = parts
            failures.append(AttemptFailure(int(attempt), code, int(at_ms), text))
        else:  # a record this ferry cannot read: shown as its text
            failures.append(AttemptFailure(None, None, None, record))
    return tuple(failures)
