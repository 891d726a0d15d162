"""The CLI's numeric flags, parsed once against their declared bounds.

Each helper is an argparse ``type=``: argparse applies it to the typed word and to a
string default taken from the environment alike, so ``--concurrency 1e9`` and
``CONCURRENCY=lots`` are both refused before any command runs, with ``X_OUT_OF_RANGE``
naming the flag and its bound (a ``FerryError`` passes through argparse's own error
handling, which only catches ``ValueError``/``TypeError``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ferry._bounds import MAX_DURATION_MS, int_text, out_of_range

MAX_SECONDS = MAX_DURATION_MS / 1000
"""The longest duration a ``--…-seconds`` flag takes: the 100 years every duration has."""


def whole(flag: str, low: int, high: int) -> Callable[[str], int]:
    """A whole number from ``low`` to ``high`` for ``flag``."""

    def parse(text: str) -> int:
        return int_text(
            text, field=flag, low=low, high=high, fix=f"pass {flag} from {low} to {high}"
        )

    return parse


def seconds(flag: str, *, positive: bool = True) -> Callable[[str], float]:
    """A number of seconds for ``flag``: finite, above 0 (or at least 0 when not
    ``positive``), at most ``MAX_SECONDS``."""
    low = "above 0" if positive else "from 0"
    bound = f"a number of seconds {low} up to {MAX_SECONDS:.0f} (100 years)"

    def parse(text: str) -> float:
        try:
            value = float(text) if len(text) <= 40 else math.nan
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0 or value > MAX_SECONDS or (positive and not value):
            raise out_of_range(flag, text, bound, f"pass {flag} as {bound}")
        return value

    return parse


PORT = whole("port", 0, 65_535)
"""A TCP port (0: any free one)."""
