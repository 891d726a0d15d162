"""Run filters and instants as operators type and read them, in the CLI and the dashboard.

Every surface hands the same words (``FILTER_WORDS``: ``queue``, ``job``, ``state``,
``view``, ``tenant``, ``since``, ``until``, ``key``, ``error_code``, ``error_text``, ``input``,
``before``, ``limit``) to ``run_filter``, so a filter means one thing everywhere and every
refusal names the word that was wrong (``X_INVARIANT``).

A *view* is a named filter over states and instants, what the dashboard's tabs show:
``scheduled`` (queued, never failed, due later), ``retrying`` (queued after a failed
attempt: its ``run_at`` is when the next attempt is due), ``sleeping`` (parked by
``step.sleep`` or waiting on children), ``dead``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime

from ferry._bounds import bounded_int, int_text, run_id
from ferry._duration import to_ms
from ferry._storable import quoted, unstorable
from ferry.drivers.protocol import JOB_STATES, RunFilter
from ferry.errors import FerryError

MAX_PAGE = 500
"""The most runs one page may ask for; a page is one bounded query, never the table."""

_LIMIT_FIX = f"ask for a page of 1 to {MAX_PAGE} runs, and page on with before"
FILTER_WORDS = (
    "queue",
    "job",
    "state",
    "view",
    "tenant",
    "since",
    "until",
    "key",
    "error_code",
    "error_text",
    "input",
    "before",
    "limit",
)
_NAME_WORDS = ("queue", "job", "tenant", "key", "error_code", "error_text")
VIEWS = ("scheduled", "retrying", "sleeping", "dead")
MAX_SEARCH_CHARS = 1_000
"""The longest text, key prefix or input pattern a search takes."""


def run_filter(
    words: Mapping[str, str | None], *, now_ms: int, default_limit: int = 50
) -> RunFilter:
    """A ``RunFilter`` from operator words; empty words mean no restriction."""
    given = {key: (value or "").strip() or None for key, value in words.items()}
    for word in _NAME_WORDS:
        storable_text(given.get(word), what=word)
    state = given.get("state")
    if state is not None and state not in JOB_STATES:
        raise FerryError(
            "X_INVARIANT",
            f"state {state!r} is not a run state",
            f"use one of: {', '.join(JOB_STATES)}",
        )
    before = given.get("before")
    if before is not None:
        before = run_id(before, field="before")
    for word in ("key", "error_code", "error_text", "input"):
        text = given.get(word)
        if text is not None and len(text) > MAX_SEARCH_CHARS:
            raise FerryError(
                "X_INVARIANT",
                f"{word} is {len(text):,} characters long; a search takes at most "
                f"{MAX_SEARCH_CHARS:,}",
                f"shorten the {word}",
            )
    wanted = RunFilter(
        queue=given.get("queue"),
        name=given.get("job"),
        state=state,
        tenant=given.get("tenant"),
        created_after_ms=instant_ms(given.get("since"), now_ms=now_ms, what="since"),
        created_before_ms=instant_ms(given.get("until"), now_ms=now_ms, what="until"),
        limit=page_size(given.get("limit"), default_limit),
        before_id=before,
        key_prefix=given.get("key"),
        error_code=given.get("error_code"),
        error_text=given.get("error_text"),
        input_contains=json_pattern(given.get("input")),
    )
    return with_view(wanted, given.get("view"), now_ms=now_ms)


def with_view(wanted: RunFilter, view: str | None, *, now_ms: int) -> RunFilter:
    """``wanted`` narrowed to ``view`` (see the module's docstring); a view that
    contradicts the state asked for is refused."""
    if view is None:
        return wanted
    if view not in VIEWS:
        raise FerryError(
            "X_INVARIANT",
            f"view {view[:40]!r} is not a view",
            f"use one of: {', '.join(VIEWS)}",
        )
    narrowed = {
        "scheduled": replace(wanted, state="queued", has_error=False, due_after_ms=now_ms),
        "retrying": replace(wanted, state="queued", has_error=True),
        "sleeping": replace(wanted, state="sleeping"),
        "dead": replace(wanted, state="dead"),
    }[view]
    if wanted.state is not None and wanted.state != narrowed.state:
        raise FerryError(
            "X_INVARIANT",
            f"view {view} lists {narrowed.state} runs, and state asks for {wanted.state} ones",
            "drop the state, or the view",
        )
    return narrowed


def json_pattern(text: str | None) -> str | None:
    """An input search's pattern as compact JSON text; ``X_INVARIANT`` for text that is
    not JSON."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise FerryError(
            "X_INVARIANT",
            f"input {quoted(text, limit=60)} is not JSON",
            'write the input pattern as JSON, e.g. {"org_id": "42"}: runs whose input '
            "contains it are listed",
        ) from None
    pattern = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    storable_text(pattern, what="input")
    return pattern


def storable_text(text: str | None, *, what: str) -> None:
    """Refuse a name no run can carry: a NUL or a lone surrogate cannot be stored, so it
    could only fail deep in the database driver instead of matching nothing."""
    problem = unstorable(text) if text is not None else None
    if problem is not None:
        raise FerryError(
            "X_INVARIANT",
            f"{what} {quoted(text, limit=40)} {problem}, which no name can contain",
            f"retype the {what}: printable text only",
        )


def instant_ms(text: str | None, *, now_ms: int, what: str) -> int | None:
    """``"1h"`` (that long ago) or an ISO 8601 instant (UTC unless it says otherwise)."""
    if text is None:
        return None
    if text[0].isdigit() and not text.isdigit() and "-" not in text:
        return now_ms - to_ms(text, what=what)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, OverflowError):
        raise FerryError(
            "X_INVARIANT",
            f"{what} {text[:40]!r} is neither a duration ago nor an ISO 8601 instant",
            f'write {what} as "30m", "2h", "7d" (that long ago) or like "2026-11-30T09:00:00Z"',
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return round(parsed.timestamp() * 1000)


def instant(ms: int | None) -> str:
    """An epoch-ms instant as UTC ISO 8601 to the second (``-`` when absent): how both
    surfaces print the instants ``since``/``until`` accept."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def page_limit(limit: int) -> int:
    """A page size given as a number (an MCP argument): 1..``MAX_PAGE``."""
    return bounded_int(limit, field="limit", low=1, high=MAX_PAGE, fix=_LIMIT_FIX)


def page_size(text: str | None, default: int) -> int:
    """How many runs a page shows: 1..``MAX_PAGE``."""
    if text is None:
        return default
    return int_text(
        text,
        field="limit",
        low=1,
        high=MAX_PAGE,
        fix=_LIMIT_FIX,
    )
