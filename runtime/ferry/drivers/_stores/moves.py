"""What a change of runs' states means beyond their rows, on each SQL dialect.

A run that ends (completed, dead, cancelled), comes back from an end or is deleted before
its end changes its parent's count of pending children, and may make a parent waiting for
them due (``ferry.drivers.fan_in``); its result waiters must hear of its end; idle workers
must hear of a run due now. The stores written once (an operator's cancel, retry or
delete) say what they changed, and the dialect does the rest in the same transaction
(``RunMoves.changed``) and after the commit (``RunMoves.committed``): Postgres' triggers
count the parents (migrations 0023 and 0031) and its statements notify the ended channel;
SQLite counts them in the transaction and tells this process's waiters once it committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ferry.drivers._stores.statements import Plan
from ferry.drivers.protocol import ENDED_STATES, JobState


@dataclass
class Moved:
    """What a transaction's changes of run state mean for this process once it commits:
    whether a run became due now (idle workers wake at once), and which runs ended (result
    waiters hear of them)."""

    woke: bool = False
    ended: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class StateChange:
    """Run ``pk`` (a child of ``parent_id``, if any) went from ``before`` to ``after``
    (``None``: it was deleted, which its parent counts as an end if it had not ended, and
    no result waiter is told of)."""

    pk: int
    parent_id: int | None
    before: JobState
    after: JobState | None

    @property
    def ended(self) -> bool:
        """The change is the run's end."""
        return self.after in ENDED_STATES and self.before not in ENDED_STATES


class RunMoves(Protocol):
    """A dialect's follow-up to runs changing state (see the module's docstring)."""

    def changed(self, changes: Sequence[StateChange], now_ms: int, moved: Moved) -> Plan[None]:
        """In the transaction that made ``changes`` (at ``now_ms``): what the dialect does
        beyond the rows, noting in ``moved`` what this process must be told."""
        ...

    def committed(self, moved: Moved) -> None:
        """Once that transaction committed: tell this process what ``moved`` holds."""
        ...
