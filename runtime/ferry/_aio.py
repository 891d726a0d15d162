"""Small asyncio helpers shared by the long-running loops."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any


async def first_of(*awaitables: Awaitable[object]) -> None:
    """Wait until the first of ``awaitables`` finishes, cancelling (and reaping) the rest."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


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
