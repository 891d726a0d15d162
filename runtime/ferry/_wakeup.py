"""The instants at which runs are known to fall due, for waiters to wake at.

A worker that nacked a run with a 200 ms backoff, or heard a NOTIFY for a run enqueued
with a delay, knows when that run becomes due; waiting for the idle poll instead (seconds)
would run a short backoff late by up to the poll interval. So a wake (``ferry.drivers._wake``)
and the worker itself wake at those instants too. Only the soonest few are kept, so nothing
grows with the runs seen: a run due after all of them is found by the idle poll, as before.
"""

from __future__ import annotations

import bisect

DEFAULT_KEPT = 64
"""How many upcoming instants are remembered."""


class DueInstants:
    """The soonest upcoming instants (epoch ms) at which a run becomes due."""

    __slots__ = ("_instants", "_kept")

    def __init__(self, kept: int = DEFAULT_KEPT) -> None:
        self._kept = kept
        self._instants: list[int] = []

    def __len__(self) -> int:
        return len(self._instants)

    @property
    def soonest(self) -> int | None:
        """The soonest instant remembered, if any."""
        return self._instants[0] if self._instants else None

    def add(self, instant_ms: int) -> bool:
        """Remember ``instant_ms`` if it is among the soonest ``kept``; True when it is now
        the soonest of all."""
        instants = self._instants
        at = bisect.bisect_left(instants, instant_ms)
        if at < len(instants) and instants[at] == instant_ms:
            return False
        if len(instants) >= self._kept:
            if at >= self._kept:
                return False
            instants.pop()
        instants.insert(at, instant_ms)
        return at == 0

    def take_due(self, now_ms: int) -> bool:
        """Forget the instants at or before ``now_ms``; True when there were any (a run
        became due: claim now)."""
        passed = bisect.bisect_right(self._instants, now_ms)
        if passed:
            del self._instants[:passed]
        return passed > 0
