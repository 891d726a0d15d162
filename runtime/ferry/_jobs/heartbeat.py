"""Lease renewal: one statement per interval renews every lease a worker holds.

A worker holding 200 runs sends one ``heartbeat_many`` every interval, not 200 timers and
200 statements; each renewal in it is still fenced on its own run. The rules stay per run:

* the lease window is measured from the last renewal of *that run* that landed (the claim
  before any), on the worker's own clock, from when that statement was *sent*: the lease it
  wrote runs from there (the worker's clock set it), so a late answer leaves less window;
* a renewal that does not land is ``heartbeat_failed`` (the window may hold the next one);
* a whole window with none landing is ``lease_lost``, and the run is renewed no more: a
  round finds every window that closed since the last one lost before it renews anything,
  and ``lapsed`` asks the same before a settle goes out. Past its window a run is not this
  attempt's any more, and a renewal or settle sent then could only land on a lease taken
  since — by this very worker, when its own claim took the run back — which the fence, on
  the claimer, cannot tell from this attempt's;
* the wait for a renewal is bounded by the earliest open window, so a statement that hangs
  (a stalled connection, a proxy dropping packets) is caught exactly like one that fails;
* once the body ended (``stop_renewing``) the lease is renewed no more, but its window is
  still watched until the settle answers (``drop``): a lease that lapses while the settle
  is in flight — behind a partition, a lock — is lost like any other.

``stop_renewing`` waits for a renewal of the run still in flight (bounded by its window),
so the last heartbeat lands before the run's settle. A renewal statement the keeper gave
up waiting for is still answered: its late failure is logged (``jobs.heartbeat.failed``),
never left to asyncio.

With ``keep_presence`` the keeper also beats while nothing is held: each interval's
statement carries the worker's presence record (``ferry._fleet``), whatever it renews.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Protocol

from ferry._aio import first_of, reap, supervise
from ferry._clock import Clock
from ferry.drivers.protocol import (
    HeartbeatOptions,
    JobDriver,
    Progress,
    RecordWrite,
    RenewalAnswer,
)

Presence = Callable[[Sequence[str]], RecordWrite]
"""The worker's presence record, given the ids of the runs a beat renews."""

logger = logging.getLogger("ferry.jobs")

_NOT_LANDED = (
    "the renewal did not land: the run is no longer held by this worker, or another "
    "session holds its row locked"
)


class LeaseHolder(Protocol):
    """A running attempt whose lease a ``LeaseKeeper`` renews, and who hears how it went."""

    @property
    def job_id(self) -> str: ...

    @property
    def progress(self) -> Progress | None:
        """The progress to report with the next renewal."""
        ...

    def heartbeat_failed(self, reason: str) -> None:
        """One renewal did not land; the window may still hold the next."""
        ...

    def lease_lost(self) -> None:
        """A whole window passed with no renewal landing (its settle may be in flight):
        the lease is gone."""
        ...

    def cancel_requested(self) -> None:
        """A renewal found that an operator asked to cancel the run (it was renewed)."""
        ...


class HeldLease:
    """One run's lease as a ``LeaseKeeper`` renews it."""

    __slots__ = ("holder", "last_landed_ms", "renewing", "settling")

    def __init__(self, holder: LeaseHolder, leased_at_ms: int) -> None:
        self.holder = holder
        self.last_landed_ms = leased_at_ms
        """When the statement behind the lease's current window was sent: the store's lease
        runs from there (the sender's clock set it), not from when its answer came back."""
        self.renewing: asyncio.Future[list[RenewalAnswer]] | None = None
        """The renewal statement in flight that carries this run, if any."""
        self.settling = False
        """The body ended and its verdict is on its way: renewed no more, still watched."""


class LeaseKeeper:
    """Renews every lease of one worker in one statement per ``interval_ms``."""

    def __init__(
        self,
        driver: JobDriver,
        *,
        worker_id: str,
        lease_ms: int,
        interval_ms: int,
        clock: Clock,
    ) -> None:
        self._driver = driver
        self._worker_id = worker_id
        self._lease_ms = lease_ms
        self._interval_ms = max(interval_ms, 1)
        self._clock = clock
        self._held: dict[HeldLease, None] = {}
        self._loop: asyncio.Task[None] | None = None
        self._presence: Presence | None = None
        self._idle_beat: asyncio.Future[list[RenewalAnswer]] | None = None
        """The presence-only beat in flight, if any."""
        self._beat_waiting = False
        """A presence-only beat fell due while one was in flight: it goes out next."""

    @property
    def held(self) -> int:
        """How many leases are renewed or watched."""
        return len(self._held)

    def keep_presence(self, presence: Presence) -> None:
        """Beat every interval from now until closed, held runs or not, each beat carrying
        ``presence(ids of the runs it renews)``."""
        self._presence = presence
        if self._loop is None:
            self._start(self._run(self._clock.now_ms(), at_once=True))

    def hold(self, holder: LeaseHolder, *, expires_at_ms: int) -> HeldLease:
        """Renew ``holder``'s lease, which its claim set to lapse at ``expires_at_ms``, from
        the next interval on, until dropped or lost. Its window is measured from the claim
        (``expires_at_ms`` less a lease), not from now: a claim that answered late has
        less of its window left."""
        now = self._clock.now_ms()
        held = HeldLease(holder, min(now, expires_at_ms - self._lease_ms))
        self._held[held] = None
        if self._loop is None:
            # The first round is due an interval after this hold, however late the loop's
            # task gets to run (the clock may have moved by then).
            self._start(self._run(now))
        return held

    def _start(self, renewals: Coroutine[None, None, None]) -> None:
        """Run the renewal loop, its failure logged as the spec's event, never left to
        asyncio."""
        self._loop = asyncio.create_task(renewals, name="ferry-heartbeat")
        supervise(
            self._loop,
            logger=logger,
            event="jobs.heartbeat.failed",
            fields={"worker_id": self._worker_id},
        )

    async def stop_renewing(self, held: HeldLease) -> None:
        """The body ended and the run's settle goes out next: renew ``held`` no more, but
        watch its window until ``drop`` (a lease that lapses while the settle is in flight
        is lost). A renewal of it still in flight answers first (bounded by its window),
        so the last heartbeat lands before the settle."""
        held.settling = True
        beat = held.renewing
        if beat is not None and not beat.done():
            remaining = held.last_landed_ms + self._lease_ms - self._clock.now_ms()
            await first_of(asyncio.shield(beat), self._clock.sleep_ms(remaining))

    def lapsed(self, held: HeldLease) -> bool:
        """Whether ``held``'s window has closed; when it has, the lease is lost now (told to
        its holder, once) and watched no more."""
        if self._clock.now_ms() - held.last_landed_ms < self._lease_ms:
            return False
        if held in self._held:
            del self._held[held]
            held.holder.lease_lost()
        return True

    def drop(self, held: HeldLease) -> None:
        """Stop renewing and watching ``held`` at once: its settle answered, or the run
        was abandoned."""
        self._held.pop(held, None)

    async def close(self) -> None:
        """Stop renewing anything (and beating at all)."""
        self._presence = None
        beat, self._idle_beat = self._idle_beat, None
        await reap(beat)  # answered before close returns: a departure comes after it
        loop, self._loop = self._loop, None
        await reap(loop)
        self._held.clear()

    async def _run(self, started_ms: int, *, at_once: bool = False) -> None:
        """Renew every interval from ``started_ms`` while anything is held; with nothing
        held, end (the next ``hold`` starts a new loop), so an idle worker keeps no timer —
        unless it keeps its presence, which it writes at once and then every interval, held
        runs or not."""
        due_ms = started_ms + self._interval_ms
        try:
            if at_once:
                self._present()
            while self._held or self._presence is not None:
                await self._clock.sleep_ms(due_ms - self._clock.now_ms())
                try:
                    self._lapse_closed()
                    renewable = [h for h in self._held if not h.settling]
                    if renewable:
                        await self._round(renewable)
                    else:
                        self._present()
                except Exception:
                    # A report that raised must not end the renewals of every other run.
                    logger.exception("jobs.heartbeat.failed", extra={"worker_id": self._worker_id})
                due_ms = self._clock.now_ms() + self._interval_ms
        finally:
            if self._loop is asyncio.current_task():
                self._loop = None

    def _present(self) -> None:
        """A beat with nothing to renew: the presence alone, sent without waiting for it (a
        stalled database must not hold back the renewal of a run claimed meanwhile), one at
        a time: a beat due while the last is unanswered goes out when that one answers (at
        most one waits). A failure is logged; the next interval writes the presence again,
        well within its expiry."""
        if self._presence is None:
            return
        if self._idle_beat is not None and not self._idle_beat.done():
            self._beat_waiting = True
            return
        beat = asyncio.ensure_future(self._driver.heartbeat_many([], record=self._presence(())))
        beat.add_done_callback(self._presence_answered)
        self._idle_beat = beat

    def _presence_answered(self, beat: asyncio.Future[list[RenewalAnswer]]) -> None:
        if beat.cancelled():
            return
        error = beat.exception()
        if error is not None:
            logger.warning(
                "jobs.worker.presence-failed",
                extra={"worker_id": self._worker_id, "error": f"{type(error).__name__}: {error}"},
            )
        if self._beat_waiting:
            self._beat_waiting = False
            self._present()

    async def _round(self, batch: list[HeldLease]) -> None:
        """One renewal of every lease in ``batch``; reports each run's verdict."""
        now = sent = self._clock.now_ms()
        renewals = [
            (h.holder.job_id, HeartbeatOptions(self._worker_id, self._lease_ms, h.holder.progress))
            for h in batch
        ]
        record = (
            self._presence([job_id for job_id, _ in renewals])
            if self._presence is not None
            else None
        )
        beat = asyncio.ensure_future(self._driver.heartbeat_many(renewals, record=record))
        for held in batch:
            held.renewing = beat
        waiting = batch
        try:
            while waiting and not beat.done():
                watched = waiting + [h for h in self._held if h.settling]
                deadline = min(h.last_landed_ms for h in watched) + self._lease_ms
                await first_of(asyncio.shield(beat), self._clock.sleep_ms(deadline - now))
                if beat.done():
                    break
                # The statement hangs: every run whose window has closed is lost now.
                now = self._clock.now_ms()
                closed = [h for h in waiting if now - h.last_landed_ms >= self._lease_ms]
                waiting = [h for h in waiting if h not in closed]
                for held in closed:
                    self._failed(held, f"renewal still unanswered after {self._lease_ms} ms")
                self._lapse_closed()
            if beat.done():
                self._answered(beat, batch, waiting=set(waiting), sent_ms=sent)
        finally:
            for held in batch:
                held.renewing = None
            if not beat.done():
                # Every run it carried is decided; its answer, or its failure, comes later.
                beat.add_done_callback(self._late_answer)

    def _late_answer(self, beat: asyncio.Future[list[RenewalAnswer]]) -> None:
        """A renewal statement answered after the keeper stopped waiting for it: every run
        it carried was already lost or settled, so only a failure is worth a line."""
        if beat.cancelled() or beat.exception() is None:
            return
        error = beat.exception()
        logger.warning(
            "jobs.heartbeat.failed",
            extra={
                "worker_id": self._worker_id,
                "error": f"{type(error).__name__}: {error}",
                "late": True,
            },
        )

    def _lapse_closed(self) -> None:
        """Every lease whose window closed is lost: one not renewed since (its renewals were
        slower than its lease), or one whose settle has not answered."""
        for held in list(self._held):
            self.lapsed(held)

    def _answered(
        self,
        beat: asyncio.Future[list[RenewalAnswer]],
        batch: list[HeldLease],
        *,
        waiting: set[HeldLease],
        sent_ms: int,
    ) -> None:
        """Apply the statement's answers (in ``batch`` order) to the runs still waiting: a
        landed renewal's window runs from ``sent_ms``, when it went out."""
        error = beat.exception()
        answers = beat.result() if error is None else [RenewalAnswer(False)] * len(batch)
        for held, answer in zip(batch, answers, strict=True):
            if held not in waiting or held not in self._held:
                continue  # lost while it hung, or released: its verdict is decided
            if answer.landed:
                held.last_landed_ms = sent_ms
                if answer.cancel_requested:
                    held.holder.cancel_requested()
            elif error is not None:
                self._failed(held, f"{type(error).__name__}: {error}")
            else:
                self._failed(held, _NOT_LANDED)

    def _failed(self, held: HeldLease, reason: str) -> None:
        """One renewal of ``held`` did not land; a closed window loses the lease."""
        if held not in self._held:
            return
        held.holder.heartbeat_failed(reason)
        self.lapsed(held)
