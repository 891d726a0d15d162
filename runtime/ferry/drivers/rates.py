"""The rate limit rule: which runs of one key may start now, and when the others will have
room — in one place, as ``settle`` is for the settle rules.

A key's window is a *sliding log*: the instants its last starts happened, at most
``limit`` of them. A run may start at ``now`` while fewer than ``limit`` logged starts lie
in ``(now - per, now]``; its start is logged. So any interval of length ``per`` — any
``[t, t + per)`` — holds at most ``limit`` starts, exactly (a fixed window would let
``2 × limit`` through across its boundary), and a burst gets ``limit`` starts at once.

A run that may not start is *deferred*: the claim puts it back with ``run_at`` at the
instant its key will have room for it, without leasing it (no attempt counted, no worker
slot held). That instant comes from a second log, the key's *bookings*: the projected
starts — the starts logged, and the instants already handed to deferred runs. The n-th
run deferred behind a full log is due at the instant the log, with every earlier booking
started on time, has room again: a backlog of 1,000 runs at 100 per minute is spread over
ten minutes once, 100 per minute, instead of waking all at once and being put back again.
A booking is never a reservation: the start is decided by the log of real starts when the
run is claimed, so a run claimed late never lets a later one through early.

Every driver applies this rule inside its claim — the SQLite and memory drivers call
``take`` on the key's window in the claim's transaction; the Postgres claim calls the
``rate_take`` function of its schema (``sql/migrations/0020_rates.sql``) and the Redis
claim script its ``rate_take`` (``lua/lib.lua``), both written after this one —
and ``tests/conformance/test_rates.py`` checks it on every driver.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RateWindow:
    """A key's two logs, each ascending, each at most ``limit`` long."""

    starts: tuple[int, ...] = ()
    """The instants runs of the key started (the last ``limit`` of them)."""
    booked: tuple[int, ...] = ()
    """The projected starts: starts of runs that were never deferred, and the instants
    handed to deferred runs (the last ``limit`` of them)."""


@dataclass(frozen=True, slots=True)
class RateDecision:
    """What one claim does with the runs of one key it picked, in claim order: the first
    ``admitted`` start now, the rest are deferred to ``hints`` (one each, in order)."""

    window: RateWindow
    admitted: int
    hints: tuple[int, ...]


def take(
    window: RateWindow,
    *,
    now_ms: int,
    limit: int,
    per_ms: int,
    booked: Sequence[bool],
) -> RateDecision:
    """Decide for the runs of one key a claim picked, in claim order; ``booked[i]`` says
    whether run ``i`` was deferred before (its projected start is logged already)."""
    floor = now_ms - per_ms
    starts = [s for s in window.starts if s > floor]
    projected = [b for b in window.booked if b > floor]
    admitted = min(len(booked), limit - len(starts))
    starts += [now_ms] * admitted
    for was_booked in booked[:admitted]:
        if not was_booked:
            insort(projected, now_ms)
    hints: list[int] = []
    for n in range(len(booked) - admitted):
        # Never before the log of real starts has room (a booking may have run late) ...
        due = starts[n % limit] + per_ms * (1 + n // limit)
        # ... nor before the bookings ahead of it have had their turn.
        if len(projected) >= limit:
            due = max(due, projected[-limit] + per_ms)
        hints.append(due)
        insort(projected, due)
        projected = projected[-limit:]
    return RateDecision(
        RateWindow(tuple(starts), tuple(projected[-limit:])), admitted, tuple(hints)
    )
