"""Small asyncio helpers shared by the long-running loops."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")


async def first_of(*awaitables: Awaitable[object]) -> None:
    """Wait until the first of ``awaitables`` finishes, cancelling (and reaping) the rest.

    The rest are reaped by ``reap``, so a cancel of the caller that arrives meanwhile
    still reaches the caller."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        await reap(*tasks)


async def reap(*tasks: asyncio.Future[Any] | None) -> None:
    """Cancel ``tasks`` (``None`` stands for no task) and wait until each has ended.

    Waiting with ``gather(return_exceptions=True)`` collects their ends (a cancel, or an
    error nobody else will read) while a cancel of the caller arriving meanwhile still
    reaches the caller: awaiting each under a blanket ``suppress(CancelledError)`` would
    swallow it with theirs."""
    present = [task for task in tasks if task is not None]
    for task in present:
        task.cancel()
    await asyncio.gather(*present, return_exceptions=True)


async def cancellable(call: Awaitable[T]) -> T:
    """Await a library's ``call``; a cancel of this task requested meanwhile is raised even
    when ``call`` dropped it.

    On Python 3.11 ``asyncio.wait_for`` drops a cancel that arrives just as the awaited
    operation completes (CPython gh-86296, fixed in 3.12) and returns its result as if
    nobody had asked; redis-py writes every command under it (its socket timeout). A
    background loop whose cancel is dropped goes on forever, and a worker's stop waits on
    it forever. ``Task.cancelling()`` still counts the request, so it is raised here."""
    task = asyncio.current_task()
    requested = task.cancelling() if task is not None else 0
    try:
        answer = await call
    except Exception:
        if task is not None and task.cancelling() > requested:
            raise asyncio.CancelledError from None
        raise
    if task is not None and task.cancelling() > requested:
        raise asyncio.CancelledError
    return answer


def supervise(
    task: asyncio.Future[Any],
    *,
    logger: logging.Logger,
    event: str,
    fields: Mapping[str, object] | None = None,
    then: Callable[[BaseException], None] | None = None,
) -> None:
    """Log ``task``'s failure as ``event`` (error, with its traceback) when it ends by
    raising, then call ``then(error)``.

    A task nobody awaits is a task whose error nobody reads: asyncio would only print
    "Task exception was never retrieved" when it is collected, long after, in no format a
    log pipeline knows. Every background task of the runtime is created with this, so its
    failure is handled and logged as the event its role documents."""

    def ended(done: asyncio.Future[Any]) -> None:
        if done.cancelled():
            return
        error = done.exception()  # read: asyncio will not complain about it later
        if error is None:
            return
        logger.error(
            event,
            extra={**(fields or {}), "error": f"{type(error).__name__}: {error}"},
            exc_info=error,
        )
        if then is not None:
            then(error)

    task.add_done_callback(ended)
