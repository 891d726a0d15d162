"""The bounded thread pool that sync job bodies and sync step functions run on.

A worker owns one, as many threads as its ``concurrency``: a run holds at most one thread
at a time (a sync body calls its sync steps on its own thread), so the worker's runs never
wait for each other's threads. The event loop stays free meanwhile: heartbeats, the round
trips, ``/livez`` and the async runs go on while a sync body blocks.

Why threads of its own and not the loop's default executor: Python cannot stop a thread.
A sync body that ignores its abort signal past the deadline is abandoned like an async
one (its verdict is settled without it), but its thread runs on until the function
returns. Such a thread is *stranded*: it still counts against the pool, so the worker
claims one run fewer until it returns instead of queueing a run behind it. The threads are
daemons: a drained worker's process exits with a stranded thread still running (it dies
there, mid-call), where ``concurrent.futures`` would join it at exit and hang the process.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import queue
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ferry._bridge import set_home_loop

T = TypeVar("T")

_pool_numbers = itertools.count(1)
_after_work: list[Callable[[], None]] = []


def after_each_work(hook: Callable[[], None]) -> None:
    """Call ``hook()`` on the pool thread after each piece of work: a framework's per-thread
    clean-up (``ferry.contrib.django`` closes Django connections past their age, as Django
    does at the end of each request)."""
    if hook not in _after_work:
        _after_work.append(hook)


class _Work(Generic[T]):
    """One function handed to the pool, and the future its caller awaits."""

    __slots__ = ("context", "fn", "future", "loop", "state")

    def __init__(self, fn: Callable[[], T], loop: asyncio.AbstractEventLoop) -> None:
        self.fn = fn
        self.loop = loop
        self.future: asyncio.Future[T] = loop.create_future()
        self.context = contextvars.copy_context()  # the caller's connection binding, its span
        self.state = "queued"  # -> "running" -> "done"; "dropped" if cancelled while queued


class ThreadPool:
    """At most ``size`` daemon threads, started as work arrives and kept for the next."""

    def __init__(self, size: int, *, on_free: Callable[[], None] | None = None) -> None:
        self.size = size
        self._on_free = on_free
        self._queue: queue.SimpleQueue[_Work[Any] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._queued = 0  # handed over, not yet taken by a thread
        self._waiting = 0  # threads waiting for work
        self._stranded = 0
        self._name = f"ferry-sync-{next(_pool_numbers)}"

    @property
    def stranded(self) -> int:
        """Threads still running work whose caller stopped waiting (an abandoned body)."""
        return self._stranded

    @property
    def threads(self) -> int:
        """Threads started so far (never more than ``size``)."""
        return len(self._threads)

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` on a pool thread, in the caller's context; the loop runs on meanwhile.

        Cancelled while ``fn`` waits for a thread, it never starts; cancelled while it runs,
        the thread is stranded until ``fn`` returns (its result is dropped)."""
        work = _Work(fn, asyncio.get_running_loop())
        self._submit(work)
        try:
            return await work.future
        except asyncio.CancelledError:
            self._abandon(work)
            raise

    def close(self) -> None:
        """Let idle threads end; a thread still running ends when its work returns."""
        for _ in self._threads:
            self._queue.put(None)

    def _submit(self, work: _Work[Any]) -> None:
        with self._lock:
            self._queued += 1
            if self._queued > self._waiting and len(self._threads) < self.size:
                thread = threading.Thread(
                    target=self._serve, name=f"{self._name}-{len(self._threads) + 1}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        self._queue.put(work)

    def _abandon(self, work: _Work[Any]) -> None:
        with self._lock:
            if work.state == "queued":
                work.state = "dropped"
            elif work.state == "running":
                work.state = "stranded"
                self._stranded += 1

    def _serve(self) -> None:
        while True:
            with self._lock:
                self._waiting += 1
            work = self._queue.get()
            with self._lock:
                self._waiting -= 1
                if work is None:
                    return
                self._queued -= 1
                if work.state == "dropped":
                    continue
                work.state = "running"
            set_home_loop(work.loop)  # where this work's enqueue_sync goes
            try:
                outcome: tuple[bool, Any] = (True, work.context.run(work.fn))
            except BaseException as error:  # handed to the awaiting caller, like any result
                outcome = (False, error)
            finally:
                set_home_loop(None)
                for hook in _after_work:
                    hook()
            with self._lock:
                stranded = work.state == "stranded"
                if stranded:
                    self._stranded -= 1
                work.state = "done"
            try:
                work.loop.call_soon_threadsafe(_settle, work.future, outcome)
                if stranded and self._on_free is not None:
                    work.loop.call_soon_threadsafe(self._on_free)
            except RuntimeError:
                pass  # the loop is closed: nobody waits for this result any more


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():
        return
    succeeded, value = outcome
    if succeeded:
        future.set_result(value)
    else:
        future.set_exception(value)


_shared: ThreadPool | None = None


def shared_pool() -> ThreadPool:
    """The pool of an ``execute_job`` called without a worker's (four threads)."""
    global _shared
    if _shared is None:
        _shared = ThreadPool(4)
    return _shared
