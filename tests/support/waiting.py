"""The one way a test waits for something to happen: ``eventually``.

A wait is for a *condition*, never for a stretch of time. The bound is a guard against a
hang, not a timing claim: past it the test fails naming what never happened. To prove that
something has *not* happened, wait for the defined point after which it could no longer
happen (``blocked_in``, a frozen clock's next deadline) instead of sleeping and hoping.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

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


def awaiting(task: asyncio.Task[Any]) -> tuple[list[str], bool]:
    """Where ``task`` is suspended: the qualified name of every coroutine on its await
    chain (outermost first), and whether it is blocked — waiting on a future that is still
    pending. A task whose future is done (or that awaits nothing, as ``sleep(0)`` does) is
    about to run again, whatever its chain says.

    The future a task waits on is not public: asyncio keeps it as ``Task._fut_waiter`` (in
    both its C and Python tasks, since 3.4); its absence fails loudly here.
    """
    names: list[str] = []
    awaited: Any = task.get_coro()
    while inspect.iscoroutine(awaited):
        names.append(awaited.cr_code.co_qualname)
        awaited = awaited.cr_await
    waiter = getattr(task, "_fut_waiter", AttributeError)
    if waiter is AttributeError:
        raise AssertionError("this asyncio keeps no Task._fut_waiter: blocked_in cannot tell")
    return names, waiter is not None and not waiter.done()


def task_named(name: str) -> asyncio.Task[Any] | None:
    """The live task of this loop called ``name`` (ferry names its long-lived tasks)."""
    return next((t for t in asyncio.all_tasks() if t.get_name() == name), None)


async def blocked_in(
    task: asyncio.Task[Any] | str, where: str, *, within_s: float = 30.0
) -> asyncio.Task[Any]:
    """Wait until ``task`` (or the task named so) is blocked inside the coroutine whose
    qualified name is ``where`` — waiting on something still pending, so nothing it does
    next can happen before that something does. Answers the task; fails at once if the
    task ends first.

    Right after a ``FrozenClock`` moves, a timer task still blocked in ``sleep_ms`` proves
    its deadline has not come: the clock wakes whatever is due before ``advance`` returns.
    """
    label = task if isinstance(task, str) else task.get_name()
    seen = [task] if isinstance(task, asyncio.Task) else []

    def blocked() -> asyncio.Task[Any] | None:
        if not seen:
            named = task_named(label)
            if named is None:
                return None
            seen.append(named)
        found = seen[0]
        if found.done():
            raise AssertionError(f"task {label} ended before it blocked in {where}")
        chain, pending = awaiting(found)
        return found if pending and where in chain else None

    found: asyncio.Task[Any] = await eventually(
        blocked, what=f"task {label} blocked in {where}", within_s=within_s
    )
    return found
