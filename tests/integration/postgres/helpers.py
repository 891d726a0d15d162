"""Small helpers shared by the Postgres driver tests."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from ferry.drivers.protocol import EnqueueRequest


def send(key: str, **changes: Any) -> EnqueueRequest:
    """A run of job "send" on queue "default" under idempotency key ``key``."""
    return dataclasses.replace(
        EnqueueRequest("send", "default", {"key": key}, key, max_attempts=3), **changes
    )


async def eventually(check: Callable[[], Awaitable[bool]], *, within_s: float = 10.0) -> None:
    """Wait until ``check()`` holds (an event on the server), failing after ``within_s``."""
    async with asyncio.timeout(within_s):
        # Server-side state (pg_stat_activity, a clock's sleepers) has no event to await.
        while not await check():  # noqa: ASYNC110
            await asyncio.sleep(0.01)
