"""The fan-in rules: how a run's children count, and when a parent waiting for them wakes.

A driver that offers ``children`` (``ferry.drivers.protocol.ChildRuns``) applies these in
the statement, transaction or script that changes the runs — never by polling:

* **Counting.** A run enqueued as a child of ``P`` (``step.enqueue``) adds one to ``P``'s
  ``children_pending``, in the enqueue's own statement; a deduplicated child adds nothing.
  When a child *ends* (its state becomes completed, dead or cancelled, by its settle or an
  operator's cancel), ``P``'s count drops by one; when it comes back (an operator's retry
  of a dead or cancelled child), it rises by one again. An operator's delete of a child
  that has not ended (queued or sleeping) counts as its end: the parent's wait reads a
  child that no longer exists as ``X_RUN_NOT_FOUND``, so nothing is left to wait for;
  deleting an ended child changes nothing (it was counted when it ended). So the count is
  always the number of ``P``'s children that exist and have not ended, whatever path
  moved them.
* **Waiting.** ``step.wait`` marks the held run as awaiting its children
  (``awaiting_children``) and parks it like ``step.sleep``: settled ``sleep`` until the
  wait's deadline, the attempt given back, no worker held. A park that lands when the
  count is already 0 makes the run due at once (its last child ended between the wait's
  read and the park); a count that drops to 0 while the run sleeps awaiting makes it due
  at once, and idle workers are woken. A due parent is claimed like any run.
* **Clearing.** The mark lasts only while the run is running or parked on that wait: any
  other change of state (its claim included) clears it, so a later ``step.sleep`` of the
  same run is never cut short.
* **Cancelling.** An operator's cancel of a run cancels its descendants that have not
  ended (queued and sleeping ones at once, running ones by request, as for the run
  itself), and a parent whose cancel was asked for enqueues no more children.

One count per parent, not per ``step.wait``: a run parked on a wait wakes when *all* its
children have ended. Why a count and not a look at the siblings: two children ending at
once in two transactions would each still see the other running and neither would wake
the parent; an increment or decrement of one row is serialised by that row's lock.

Postgres applies the counting and waking as row triggers on the runs table (migration
0023; 0031 for a delete), because one statement cannot update a row twice: a child's
settle and its parent's settle or claim often share the worker's one round-trip
statement, and a trigger runs after that statement, in its transaction. The SQLite and
memory drivers apply them in the transaction of each change (``_sqlite.runs``, and its
``CountedMoves`` for an operator's cancel, retry or delete written once in
``_stores.introspect``), and Redis in each script (``lua/lib.lua``).
"""

from __future__ import annotations

from ferry.drivers.protocol import ENDED_STATES, JobError, JobState

CANCELLED_WITH_PARENT = JobError(
    "X_CANCELLED", "cancelled by an operator, with the run that enqueued it"
)
"""The error a descendant cancelled with its parent run is left with."""


def count_change(before: JobState, after: JobState | None) -> int:
    """What a child moving from ``before`` to ``after`` (``None``: deleted) does to its
    parent's count: -1 when it ends or is deleted before its end, +1 when it comes back
    from an end, 0 otherwise."""
    return int(before in ENDED_STATES) - int(after is None or after in ENDED_STATES)


def wakes_parent(*, state: JobState, awaiting_children: bool, children_pending: int) -> bool:
    """A parent in ``state`` with ``children_pending`` children left is due now: it
    sleeps awaiting its children (or parks so, ``state`` then being its new state) and none
    is pending."""
    return state == "sleeping" and awaiting_children and children_pending <= 0
