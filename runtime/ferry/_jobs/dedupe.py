"""``@job(dedupe=...)``: which stored run of a key a new enqueue of it is deduplicated against.

Its own module because the declaration, the facade (``EnqueueRequest.dedupe``) and the
manifest all read the one parsed rule, and a mistyped rule must be refused where the job
is declared, not at its first enqueue.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal, TypeAlias

from ferry._duration import Duration, to_ms
from ferry.drivers.protocol import RETAINED, Dedupe
from ferry.errors import FerryError

DedupeSetting: TypeAlias = Literal["retained", "active"] | Duration
"""What ``dedupe=`` takes: ``"retained"`` (the default), ``"active"``, or a duration."""

_FIX = (
    'pass dedupe="retained" (the default: while the run is stored), dedupe="active" (while '
    'it is queued, sleeping or running) or a window such as dedupe="1h"'
)


def dedupe_rule(setting: object) -> Dedupe:
    """``setting`` as the rule drivers apply; ``X_INVARIANT`` for anything else than the
    two words or a positive duration, ``X_OUT_OF_RANGE`` for a window over 100 years."""
    if setting == "retained":
        return RETAINED
    if setting == "active":
        return Dedupe(active_only=True)
    if not isinstance(setting, str | int | float | timedelta) or isinstance(setting, bool):
        raise _not_a_rule(setting)
    try:
        window_ms = to_ms(setting, what="job dedupe")
    except FerryError as error:
        if error.code != "X_INVARIANT":
            raise  # over 100 years: X_OUT_OF_RANGE, naming the field and the bound
        raise _not_a_rule(setting) from None
    if window_ms == 0:
        raise FerryError(
            "X_INVARIANT",
            f"job dedupe {setting!r} is a window of 0 ms, which would dedupe nothing",
            _FIX,
        )
    return Dedupe(window_ms=window_ms)


def described(rule: Dedupe) -> str | int:
    """The rule as the manifest shows it: ``"retained"``, ``"active"``, or the window in ms."""
    if rule.window_ms is not None:
        return rule.window_ms
    return "active" if rule.active_only else "retained"


def _not_a_rule(setting: object) -> FerryError:
    return FerryError(
        "X_INVARIANT",
        f'job dedupe {setting!r} is not "retained", "active" or a duration',
        _FIX,
    )
