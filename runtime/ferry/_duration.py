"""Durations as people write them: ``"30s"``, ``"3d"``, ``"1h30m"``, ``"250ms"``, or seconds."""

from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import TypeAlias

from ferry._bounds import check_duration_ms
from ferry.errors import FerryError

Duration: TypeAlias = str | int | float | timedelta

_UNIT_MS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")


def to_ms(value: Duration, *, what: str = "duration") -> int:
    """Whole milliseconds for a duration; numbers are seconds. Refuses negatives and garbage
    (``X_INVARIANT``) and anything over ``MAX_DURATION_MS``, 100 years (``X_OUT_OF_RANGE``)."""
    if isinstance(value, timedelta):
        ms = value.total_seconds() * 1000
    elif isinstance(value, bool):
        raise _bad(value, what)
    elif isinstance(value, int | float):
        ms = float(value) * 1000
    elif isinstance(value, str):
        text = value.strip().replace(" ", "")
        parts = _PART.findall(text)
        if not text or "".join(n + u for n, u in parts) != text:
            raise _bad(value, what)
        ms = sum(float(n) * _UNIT_MS[u] for n, u in parts)
    else:
        raise _bad(value, what)
    if not math.isfinite(ms) or ms < 0:
        raise _bad(value, what)
    return check_duration_ms(round(ms), field=what)


def _bad(value: object, what: str) -> FerryError:
    return FerryError(
        "X_INVARIANT",
        f"{what} {value!r} is not a duration",
        'write it as a non-negative number of seconds or a string like "250ms", "30s", '
        '"5m", "1h30m", "3d"',
    )
