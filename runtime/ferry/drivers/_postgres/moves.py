"""``RunMoves`` on Postgres: the triggers of migration 0023 count a changed run in its
parent (and wake a parent made due) after every statement that changes a run's state, so
what is left is to tell result waiters of the runs that ended, on the ended channel, in the
same transaction (``runs_ended``: delivered on commit, never on rollback). Nothing is left
for after the commit: every process hears the notifications, this one included."""

from __future__ import annotations

from collections.abc import Sequence

from ferry.drivers._stores.moves import Moved, StateChange
from ferry.drivers._stores.statements import Plan


class NotifiedMoves:
    """Runs that ended, told on the ended channel."""

    def changed(self, changes: Sequence[StateChange], now_ms: int, moved: Moved) -> Plan[None]:
        ended = [change.pk for change in changes if change.ended]
        if ended:
            yield "runs_ended", {"ids": ended}

    def committed(self, moved: Moved) -> None:
        """Nothing: the statements notified."""
