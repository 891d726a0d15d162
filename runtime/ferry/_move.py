"""Moving a queue's runs from one store to another (``ferry jobs drain``), batch by batch.

Per batch: reserve on the source (the runs turn ``moving``: unclaimable, and no crash gives
them back), import into the target (answered only once committed there), remove from the
source, fenced on the reservation. Killed between any two of those, the runs are either
still ``moving`` on the source (not runnable anywhere, so not lost) or also committed on
the target (runnable there only); the rerun to the same target takes them over, the
re-import answers ``present`` and the remove lands. Nothing here is kept that a kill could
lose, which is why a drain into a store that lives in this process is refused before it
starts: that store dies with the command, and with it every run removed from the source.

A run whose key the target already gives to a different run is a collision: it is held
``moving`` until the drain ends (so the next reserve does not offer it again) and then put
back where it was on the source, and reported. A batch in which every run collided stops
the drain: the collisions need a person's decision, and a target that is the source under
another name collides on every run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ferry.drivers.capabilities import TRANSFER, need
from ferry.drivers.protocol import JobDriver

logger = logging.getLogger("ferry.move")

StopReason = Literal["collisions", "contended"]
"""A batch removed nothing from the source, so the drain stopped: every run in it collided
(a target that already holds these keys — or the source itself under another name), or
another drain to the same target took over every run it copied before its remove."""

COLLISIONS_LISTED = 100
"""How many collisions a report names one by one (all are counted)."""


@dataclass(frozen=True, slots=True)
class BatchReport:
    """What one batch did."""

    reserved: int
    """Runs reserved on the source (including runs an interrupted drain had reserved)."""
    imported: int
    """Written to the target now."""
    present: int
    """Already on the target: copied by an interrupted drain (or by a concurrent one)."""
    collisions: int
    """Keys the target gives to a different run: not moved, put back on the source."""
    removed: int
    """Deleted from the source after their copy was committed on the target."""
    taken_over: int
    """Copied, then taken over by another drain to the same target before the remove."""
    ms: int

    def to_json(self) -> dict[str, int]:
        return {
            "reserved": self.reserved,
            "imported": self.imported,
            "present": self.present,
            "collisions": self.collisions,
            "removed": self.removed,
            "taken_over": self.taken_over,
            "ms": self.ms,
        }


@dataclass(frozen=True, slots=True)
class Collision:
    """A source run not moved because the target's run ``target_id`` holds its key."""

    source_id: str
    idempotency_key: str
    target_id: str


@dataclass
class MoveReport:
    """Every batch of one drain, the collisions it put back, and why it stopped early."""

    batches: list[BatchReport] = field(default_factory=list)
    collisions: list[Collision] = field(default_factory=list)
    released: int = 0
    stopped: StopReason | None = None
    """Why the drain stopped before the source ran out of runs to move, if it did."""

    def total(self) -> BatchReport:
        return BatchReport(
            *(sum(getattr(b, name) for b in self.batches) for name in _COUNTS),
        )


_COUNTS = ("reserved", "imported", "present", "collisions", "removed", "taken_over", "ms")


async def move_runs(
    source: JobDriver,
    target: JobDriver,
    *,
    drain_id: str,
    batch: int,
    queues: Sequence[str] | None = None,
    include_dead: bool = False,
    report: MoveReport | None = None,
) -> MoveReport:
    """Move every queued (with ``include_dead``, also dead) run of ``queues`` from
    ``source`` to ``target``, ``batch`` runs at a time, until the source has none left.

    Each batch is added to ``report`` as it completes, so a caller holding it still knows
    what moved when a store fails mid-way. A target with no location lives in this process
    (``ferry jobs drain`` refuses one; a test may not): its runs are reserved for it by
    its object's identity."""
    outgoing = need(source, TRANSFER, by="moving runs out (ferry jobs drain)")
    incoming = need(target, TRANSFER, by="moving runs in (ferry jobs drain)")
    location = target.location or f"process-local:{id(target):x}"
    report = report if report is not None else MoveReport()
    held: dict[str, Collision] = {}
    while True:
        started = time.perf_counter()
        runs = await outgoing.reserve(
            drain_id, target=location, limit=batch, queues=queues, include_dead=include_dead
        )
        if not runs:
            break
        answers = await incoming.import_runs(runs)
        copied = [
            run.id
            for run, answer in zip(runs, answers, strict=True)
            if answer.outcome != "collision"
        ]
        removed = await outgoing.remove(drain_id, copied) if copied else []
        collided = [
            Collision(run.id, run.idempotency_key, answer.job_id)
            for run, answer in zip(runs, answers, strict=True)
            if answer.outcome == "collision"
        ]
        held |= {c.source_id: c for c in collided}
        done = BatchReport(
            reserved=len(runs),
            imported=sum(a.outcome == "imported" for a in answers),
            present=sum(a.outcome == "present" for a in answers),
            collisions=len(collided),
            removed=len(removed),
            taken_over=len(copied) - len(removed),
            ms=round((time.perf_counter() - started) * 1000),
        )
        report.batches.append(done)
        logger.info("jobs.drain.batch", extra={"drain_id": drain_id, **done.to_json()})
        if not removed:  # a batch that moves nothing would be followed by more of the same
            report.stopped = "contended" if copied else "collisions"
            break
    if held:
        report.released = len(await outgoing.release(drain_id, list(held)))
    report.collisions = list(held.values())
    return report
