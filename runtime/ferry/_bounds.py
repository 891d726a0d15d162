"""The declared bounds of every number and id a caller hands ferry, and the checks that
hold them at the boundary.

A number that reaches storage unchecked fails there, in a driver's own words (an
``integer`` column's overflow, SQLite's "cannot store REAL value", Python's digit limit),
or worse, is stored and breaks every later read of the row. So each surface — the job
facade, the declarations, the CLI, the dashboard, the MCP tools — checks its inputs
against these bounds before any driver sees them, and refuses with ``X_OUT_OF_RANGE``
(or ``X_RUN_ID_INVALID``) naming the field and the bound. The bounds are the narrowest
column any driver keeps the value in; docs/errors.md and the surface pages list them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from ferry.errors import FerryError

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
"""A PostgreSQL ``integer`` column: priority, attempts, a concurrency or cap limit."""
RUN_ID_MAX = 2**63 - 1
"""Run ids are ``bigint`` row ids numbered from 1 (Redis numbers them the same way)."""
MAX_DURATION_MS = 100 * 365 * 86_400_000
"""The longest duration ferry takes anywhere (a delay, ``step.sleep``, a timeout, a
backoff, a retention, a window): 100 years of 365 days. Added to any instant up to the
year 9899 it stays an instant every clock, column and rendering can hold."""
MAX_INSTANT_MS = int(datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC).timestamp() * 1000)
"""The latest instant a run may be due at: the end of the year 9999, the last instant
Python's ``datetime`` (every rendering of a ``runAt``) can show."""
MIN_INSTANT_MS = 0
"""The earliest instant a run may be due at: the Unix epoch (an earlier one is a mistake
in the caller's arithmetic; a run due in the past runs now anyway)."""
_RUN_ID_DIGITS = len(str(RUN_ID_MAX))


def out_of_range(field: str, value: object, bound: str, fix: str) -> FerryError:
    """``X_OUT_OF_RANGE`` for ``field`` holding ``value``, outside ``bound`` (words such as
    "a whole number from 1 to 2147483647")."""
    return FerryError("X_OUT_OF_RANGE", f"{field} {shown(value)} is not {bound}", fix)


def shown(value: object) -> str:
    """``value`` as a message shows it: its ``repr`` cut to 40 characters, and a huge
    number by its size (``repr`` of an int over 4300 digits raises)."""
    if isinstance(value, int) and value.bit_length() > 128:
        return f"<a {value.bit_length()}-bit number>"
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:39]}… ({len(text)} characters)"


def bounded_int(value: object, *, field: str, low: int, high: int, fix: str) -> int:
    """``value`` if it is a whole number (``True`` is not one) in ``low..high``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise out_of_range(field, value, f"a whole number from {low} to {high}", fix)
    return value


def int_text(text: str, *, field: str, low: int, high: int, fix: str) -> int:
    """A whole number typed as text (a CLI flag, a form field) in ``low..high``; the digit
    count is checked before conversion, so a thousand-digit word costs nothing."""
    stripped = text.strip()
    digits = stripped.removeprefix("-")
    limit = max(len(str(low)), len(str(high)))
    if (
        not (digits.isascii() and digits.isdigit())
        or len(stripped) > limit
        or not low <= int(stripped) <= high
    ):
        raise out_of_range(field, text, f"a whole number from {low} to {high}", fix)
    return int(stripped)


def check_duration_ms(ms: int, *, field: str) -> int:
    """``ms`` if it is within ``MAX_DURATION_MS``."""
    if ms > MAX_DURATION_MS:
        raise FerryError(
            "X_OUT_OF_RANGE",
            f"{field} is {shown(ms)} ms, over the longest duration ferry takes: 100 years "
            f"({MAX_DURATION_MS} ms)",
            f'give {field} a duration under 100 years, e.g. "30d"',
        )
    return ms


def check_instant_ms(ms: int, *, field: str) -> int:
    """``ms`` if a run may be due then: from the epoch to the end of the year 9999."""
    if not MIN_INSTANT_MS <= ms <= MAX_INSTANT_MS:
        raise FerryError(
            "X_OUT_OF_RANGE",
            f"{field} falls at {shown(ms)} ms since the epoch, outside the instants a run may "
            "be due at: 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z",
            f"give {field} an instant (or a duration from now) within those years",
        )
    return ms


def run_id(value: object, *, field: str = "run id") -> str:
    """A run id in its one written form — the decimal digits of a number from 1 to
    ``RUN_ID_MAX`` without leading zeros — from a ``str`` or an ``int``; else
    ``X_RUN_ID_INVALID``. A well-formed id may still name no run (``X_RUN_NOT_FOUND``)."""
    text = value
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value) if 0 < value <= RUN_ID_MAX else None
    if (
        isinstance(text, str)
        and 0 < len(text) <= _RUN_ID_DIGITS
        and text.isascii()
        and text.isdigit()
        and text[0] != "0"
        and int(text) <= RUN_ID_MAX
    ):
        return text
    raise FerryError(
        "X_RUN_ID_INVALID",
        f"{field} {shown(value)} is not a run id: a whole number from 1 to {RUN_ID_MAX}",
        "take the id from `ferry jobs ls --json` (its `id`)",
    )
