"""A cancel always reaches the loop it was meant for, even through a library that drops it
(``ferry._aio``): a worker's stop cancels its background loops and waits for them."""

from __future__ import annotations

import asyncio
import sys

import pytest

from ferry._aio import cancellable, first_of


async def _cancelled_as_its_inner_completes(call: object) -> asyncio.Task[object]:
    """``call`` awaited in a task that is cancelled in the very turn the operation it
    waits on (under ``asyncio.wait_for``, as redis-py writes a command) completes."""
    inner: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def library_call() -> str:
        return await asyncio.wait_for(inner, 5)

    task: asyncio.Task[object] = asyncio.create_task(call(library_call()))  # type: ignore[operator]
    await asyncio.sleep(0)  # the task waits inside wait_for
    inner.set_result("answer")
    task.cancel()
    await asyncio.wait([task])
    return task


async def _plainly(call: asyncio.Future[str]) -> str:
    return await call


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="wait_for keeps the cancel from 3.12")
async def test_python_3_11s_wait_for_drops_a_cancel_that_arrives_as_its_operation_completes() -> (
    None
):
    task = await _cancelled_as_its_inner_completes(_plainly)
    assert not task.cancelled() and task.result() == "answer"
    assert task.cancelling() == 1  # the request is still counted: what cancellable reads


async def test_a_cancel_dropped_by_the_library_is_raised_by_cancellable() -> None:
    task = await _cancelled_as_its_inner_completes(cancellable)
    assert task.cancelled()


async def test_cancellable_answers_when_nothing_asked_to_cancel() -> None:
    async def answer() -> str:
        return "answer"

    assert await cancellable(answer()) == "answer"


async def test_a_cancel_that_arrives_while_first_of_reaps_the_rest_reaches_its_caller() -> None:
    reaping = asyncio.Event()

    async def at_once() -> None:
        return None

    async def reluctant() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            reaping.set()
            await asyncio.sleep(0)  # being reaped takes a turn: the caller's cancel lands

    task = asyncio.create_task(first_of(at_once(), reluctant()))
    await reaping.wait()
    task.cancel()
    await asyncio.wait([task])
    assert task.cancelled()
