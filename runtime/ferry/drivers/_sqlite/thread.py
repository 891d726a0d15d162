"""One ``sqlite3`` connection on a thread of its own, with group commit for the writer.

The driver talks to SQLite through the standard library's ``sqlite3`` — no dependency
beyond the SQLite every Python carries — on a dedicated thread per connection. A call
hands the thread a function of the connection, and the whole function runs there before
the next one starts, so an operation of several statements is one hop off the event loop
and two operations never interleave on one connection. (``aiosqlite`` also runs
``sqlite3`` on a thread, but hops once per statement, so a transaction would need a lock
held across awaits; applications keep using it, and hand the driver their ``aiosqlite``
connection to join a transaction.)

Group commit: the writer runs every write operation queued while it was busy — the
settles, renewals, step records and claims of a busy process — in one ``BEGIN IMMEDIATE``
transaction, each in a savepoint of its own: the file's write lock is taken, and the log
synced, once per group instead of once per operation, which is what lets several
processes share one file under load. An operation that fails rolls back to its savepoint
and fails alone; its neighbours commit. Results are handed back only after the commit.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ferry.drivers._sqlite.connection import refusal_for
from ferry.drivers._sqlite.target import SqliteTarget

T = TypeVar("T")

MAX_GROUP = 256
"""The most operations one transaction takes, so one group never holds the lock long."""


@dataclass(frozen=True, slots=True)
class _Job:
    work: Callable[[sqlite3.Connection], Any]
    grouped: bool
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]


_STOP = object()


class ConnectionThread:
    """A connection, opened on its thread at the first call (and again after a failure)."""

    def __init__(
        self, target: SqliteTarget, connect: Callable[[], sqlite3.Connection], *, name: str
    ) -> None:
        self._target = target
        self._connect = connect
        self._name = name
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._connection: sqlite3.Connection | None = None

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(connection)`` on its own, outside any transaction the thread opens."""
        return await self._submit(work, grouped=False)

    async def transact(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(connection)`` inside a ``BEGIN IMMEDIATE`` transaction (shared with the
        other work queued meanwhile), answered once that transaction committed."""
        return await self._submit(work, grouped=True)

    async def close(self) -> None:
        """Finish what is queued, close the connection and end the thread."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(_STOP)
            await asyncio.to_thread(thread.join)

    async def _submit(self, work: Callable[[sqlite3.Connection], T], *, grouped: bool) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if self._thread is None:
            # A daemon: a driver nobody closed must not hold the interpreter open, and a
            # transaction cut short at exit rolls back like one cut short by kill -9.
            self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
            self._thread.start()
        self._queue.put(_Job(work, grouped, loop, future))
        return await future

    def _serve(self) -> None:
        held: Any = None
        while True:
            job = held if held is not None else self._queue.get()
            held = None
            if job is _STOP:
                break
            if job.future.done():  # its caller stopped waiting: nothing to do for it
                continue
            group = [job]
            while job.grouped and len(group) < MAX_GROUP:
                try:
                    following = self._queue.get_nowait()
                except queue.Empty:
                    break
                if following is _STOP or not following.grouped:
                    held = following
                    break
                if not following.future.done():
                    group.append(following)
            try:
                if job.grouped:
                    self._group(group)
                else:
                    self._alone(job)
            except BaseException as error:  # the connection itself failed mid-group
                for failed in group:
                    _deliver(failed, None, self._refusal(error))
                self._forget_connection()
        self._forget_connection()

    def _forget_connection(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            if self._connection is not None:
                self._connection.close()
        self._connection = None

    def _opened(self) -> sqlite3.Connection:
        if self._connection is None:
            self._connection = self._connect()
        return self._connection

    def _alone(self, job: _Job) -> None:
        try:
            result = job.work(self._opened())
        except BaseException as error:
            _deliver(job, None, self._refusal(error))
        else:
            _deliver(job, result, None)

    def _group(self, group: list[_Job]) -> None:
        try:
            connection = self._opened()
            connection.execute("BEGIN IMMEDIATE")
        except BaseException as error:
            for job in group:
                _deliver(job, None, self._refusal(error))
            return
        outcomes: list[tuple[_Job, Any, BaseException | None]] = []
        for job in group:
            if job.future.done():  # its caller stopped waiting while the group formed
                continue
            connection.execute("SAVEPOINT operation")
            try:
                result = job.work(connection)
            except BaseException as error:
                if not connection.in_transaction:
                    # SQLite rolled the whole transaction back (a full disk, an I/O error):
                    # nothing of the group landed, so every operation of it failed.
                    for failed in group:
                        _deliver(failed, None, self._refusal(error))
                    return
                connection.execute("ROLLBACK TO operation")
                connection.execute("RELEASE operation")
                outcomes.append((job, None, self._refusal(error)))
            else:
                connection.execute("RELEASE operation")
                outcomes.append((job, result, None))
        try:
            connection.execute("COMMIT")
        except BaseException as error:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            for job in group:
                _deliver(job, None, self._refusal(error))
            return
        for job, result, failure in outcomes:
            _deliver(job, result, failure)

    def _refusal(self, error: BaseException) -> BaseException:
        if isinstance(error, sqlite3.Error):
            refusal = refusal_for(error, self._target)
            if refusal is not None:
                return refusal
        return error


def _deliver(job: _Job, result: Any, error: BaseException | None) -> None:
    def settle() -> None:
        if job.future.done():
            return
        if error is not None:
            job.future.set_exception(error)
        else:
            job.future.set_result(result)

    with contextlib.suppress(RuntimeError):  # the caller's loop is gone: nobody waits
        job.loop.call_soon_threadsafe(settle)
