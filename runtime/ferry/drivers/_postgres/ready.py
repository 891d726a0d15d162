"""The ready set's upkeep on Postgres: lapsed leases rescued, later runs promoted, the two
rotating partitions switched and truncated.

Migration 0029 says why the claimable set is its own partitioned table. Keeping it small
and claimable is this module's one job, done before a claim by whichever process finds
the turn due, one process of the fleet per ``TEND_EVERY_MS`` (``ready_tend`` skips a turn
another process holds): there is no tending process to deploy, and a fleet that claims
nothing needs nothing tended. Each turn

* puts back in the queue the running runs whose lease lapsed (a crashed or cut-off
  worker's): the claim used to take them over itself, walking every running run to find
  them; the next claim takes them now, their attempt counted as before;
* promotes the ``ready_later`` runs due within ``READY_LOOKAHEAD_MS`` into the current
  partition, long before they fall due;
* rotates: once the current partition holds ``ROTATE_AFTER_DEAD`` dead rows (and more than
  live ones, so copying the live rows never costs more than the dead ones did), new rows
  go to the other partition, the rows still ready are moved out of the old one in batches,
  and the old one is truncated under a lock taken with a 10 ms ``lock_timeout``. TRUNCATE
  frees dead rows that vacuum must keep while a snapshot holds the xmin horizon back.

A transaction that has read the ready set holds its partitions until it ends; the
truncation then gives up at once and is tried again the next turn (logged, at most once a
minute, as ``jobs.ready.rotation-held``): claims never queue behind a TRUNCATE waiting for
such a lock. Unlike PgQ, nothing here waits for the horizon to move: the rows still ready
are copied under the lock, so no snapshot can miss one.
"""

from __future__ import annotations

import logging

import asyncpg

from ferry.drivers._postgres.database import Database, Pool

logger = logging.getLogger("ferry.drivers.postgres")

TEND_EVERY_MS = 1_000
"""How often the fleet tends the ready set: a lapsed lease is back in the queue within
this of its lapse (once a claim comes), a rotation is decided at most this often."""

TEND_BATCH = 10_000
"""Rescued and promoted runs a statement takes at most (a full batch is followed at once
by another)."""

ROTATE_AFTER_DEAD = 2_000
"""Dead rows in the current partition (its statistics' count) that make a rotation due.
Every claim may walk them (about a microsecond each) while a snapshot pins them."""

ROTATE_EVERY_MS = 5_000
"""The shortest time between two switches: a truncation costs the server new files and
every connection a re-planned claim."""

MOVE_BATCH = 5_000
"""Rows a turn moves out of the retiring partition without locking it. The last ones are
moved under the lock, which is therefore held for a few thousand rows at most."""

HELD_WARNING_EVERY_MS = 60_000
"""How often a truncation held back by another transaction's lock is logged."""


class RotationHeld(Exception):
    """The retiring partition is held by another transaction: truncation waits a turn."""


class ReadyTending:
    """Tends one schema's ready set for one driver, when the turn is this driver's."""

    def __init__(self, database: Database) -> None:
        self._db = database
        self._asked_at_ms: int | None = None
        self._warned_at_ms: int | None = None

    async def tend(self, pool: Pool, now_ms: int) -> None:
        """Tend the ready set if no process of the fleet did in the last ``TEND_EVERY_MS``;
        at most one statement when another did (none when this driver asked that recently)."""
        asked = self._asked_at_ms
        if asked is not None and 0 <= now_ms - asked < TEND_EVERY_MS:
            return
        self._asked_at_ms = now_ms
        queries = self._db.queries
        turn = await pool.fetchrow(queries["ready_tend"], now_ms, TEND_EVERY_MS, TEND_BATCH)
        if turn is None:
            return  # another process tends
        rescued, promoted = turn["rescued"], turn["promoted"]
        while turn is not None and TEND_BATCH in (turn["rescued"], turn["promoted"]):
            turn = await pool.fetchrow(queries["ready_tend"], now_ms, 0, TEND_BATCH)
            if turn is not None:
                rescued, promoted = rescued + turn["rescued"], promoted + turn["promoted"]
        if rescued:
            logger.info("jobs.ready.rescued", extra={"runs": rescued})
        if turn is None:
            return
        retiring = turn["retiring_part"]
        if retiring is None and _rotation_due(turn, now_ms):
            retiring = await pool.fetchval(queries["ready_switch"], now_ms, turn["current_part"])
        if retiring is not None:
            await self._retire(pool, retiring, now_ms)

    async def _retire(self, pool: Pool, part: int, now_ms: int) -> None:
        """Empty partition ``part`` and truncate it, or move a batch of it this turn."""
        moved = await pool.fetchval(self._db.queries["ready_move"], part, now_ms, MOVE_BATCH)
        if moved >= MOVE_BATCH:
            return  # the rest next turn, still without a lock
        try:
            kept = await self._truncate(pool, part, now_ms)
        except RotationHeld:
            self._held(part, now_ms)
            return
        if kept is not None:
            logger.debug("jobs.ready.rotated", extra={"partition": part, "kept": kept})

    async def _truncate(self, pool: Pool, part: int, now_ms: int) -> int | None:
        """Copy what is still ready out of ``part`` and truncate it, in one transaction under
        a lock on it; answers the rows kept, ``None`` when another process retires it."""
        queries = self._db.queries
        async with pool.acquire() as connection, connection.transaction():
            held = await connection.fetchrow(queries["ready_retiring"])
            if held is None or held["retiring_part"] != part:
                return None
            try:
                await connection.execute(_for_part(queries["ready_lock"], part))
            except asyncpg.LockNotAvailableError:
                raise RotationHeld() from None
            kept: int | None = await connection.fetchval(queries["ready_retire"], part, now_ms)
            if kept is not None:
                await connection.execute(_for_part(queries["ready_truncate"], part))
            return kept

    def _held(self, part: int, now_ms: int) -> None:
        warned = self._warned_at_ms
        if warned is not None and 0 <= now_ms - warned < HELD_WARNING_EVERY_MS:
            return
        self._warned_at_ms = now_ms
        logger.warning(
            "jobs.ready.rotation-held",
            extra={
                "schema": self._db.queries.schema,
                "partition": f"ready_{part}",
                "fix": "end the transaction that read the ready set (pg_stat_activity "
                "shows who holds it); claims walk its dead rows until it ends",
            },
        )


def _rotation_due(turn: asyncpg.Record, now_ms: int) -> bool:
    """Whether the current partition's dead rows call for a switch now."""
    since = now_ms - turn["switched_at_ms"]
    if 0 <= since < ROTATE_EVERY_MS:
        return False
    dead, live = turn["current_dead"] or 0, turn["current_live"] or 0
    return bool(dead >= max(ROTATE_AFTER_DEAD, live))


def _for_part(statement: str, part: int) -> str:
    """``statement`` naming the rotating partition ``part`` (0 or 1, as the rotation's
    CHECK constraints hold it): an identifier cannot be a parameter."""
    return statement.replace("{part}", str(int(part)))
