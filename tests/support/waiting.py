"""The one way a test waits for something to happen: ``eventually``.

A wait is for a *condition*, never for a stretch of time. The bound is a guard against a
hang, not a timing claim: past it the test fails naming what never happened.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar, cast

T = TypeVar("T")

FIRST_POLL_S = 0.001
"""The first pause between checks: an in-process condition is usually a few turns away."""


async def eventually(
    check: Callable[[], Awaitable[T | None] | T | None],
    *,
    what: str,
    within_s: float = 30.0,
    every_s: float = 0.05,
    first_s: float = FIRST_POLL_S,
    context: Callable[[], str] | None = None,
) -> T:
    """Call ``check`` (sync or async) until it answers something truthy; answer that.

    Polls after ``first_s`` (a millisecond), backing off to every ``every_s``. Past
    ``within_s`` fails with "``what`` never happened", followed by ``context()`` (a
    process's log, the last error seen) when given. An exception from ``check`` fails the
    wait at once.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    pause = min(first_s, every_s)
    while True:
        answer = check()
        if inspect.iscoroutine(answer):  # an async check; a task it answers is a value
            answer = await answer
        if answer:
            return cast(T, answer)
        if loop.time() > deadline:
            detail = f"\n{context()}" if context is not None else ""
            raise AssertionError(f"{what} never happened (waited {within_s} s){detail}")
        await asyncio.sleep(pause)
        pause = min(pause * 2, every_s)


def eventually_blocking(
    check: Callable[[], T | None],
    *,
    what: str,
    within_s: float = 60.0,
    every_s: float = 0.5,
    context: Callable[[], str] | None = None,
) -> T:
    """``eventually`` for synchronous code (the e2e suites drive ``kubectl``): the same
    bound and message, polled every ``every_s`` (each check may start a process). The wait
    runs on a loop of its own in a worker thread and blocks the caller, so it serves a
    plain test and a plain helper an async test calls alike."""
    waiting = eventually(
        check, what=what, within_s=within_s, every_s=every_s, first_s=every_s, context=context
    )
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, waiting).result()
