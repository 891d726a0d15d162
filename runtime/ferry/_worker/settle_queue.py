"""Group commit for settles: many runs' acks and nacks in one statement.

A worker running 32 bodies at once finishes them in bursts; settling each on its own is
one statement and one commit per run, which is what limits end-to-end throughput. Here
the first settle goes out at once, and every settle that arrives while a statement is in
flight rides in the next one — so a lone settle still costs one round trip (a limit-1
key keeps its round-trip speed) and a burst costs one round trip per burst, never a
timer's wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, runtime_checkable

from ferry.drivers.protocol import AckOptions, NackOptions

Settle = tuple[str, AckOptions | NackOptions]


@runtime_checkable
class BatchSettlingDriver(Protocol):
    """A driver that settles many runs in one round trip (the Postgres driver does)."""

    async def settle_many(self, settles: Sequence[Settle]) -> list[bool]: ...


class SettleBatch:
    """``ack``/``nack`` with the driver's signatures, coalesced into ``settle_many``."""

    def __init__(self, settle_many: Callable[[Sequence[Settle]], Awaitable[list[bool]]]):
        self._settle_many = settle_many
        self._waiting: list[tuple[Settle, asyncio.Future[bool]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def ack(self, job_id: str, options: AckOptions) -> bool:
        return await self._submit((job_id, options))

    async def nack(self, job_id: str, options: NackOptions) -> bool:
        return await self._submit((job_id, options))

    async def _submit(self, settle: Settle) -> bool:
        landed: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.append((settle, landed))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await landed

    async def _flush(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            try:
                results = await self._settle_many([settle for settle, _ in batch])
            except Exception as error:  # every waiter hears the failure of its statement
                for _, landed in batch:
                    if not landed.done():
                        landed.set_exception(error)
                continue
            for (_, landed), result in zip(batch, results, strict=True):
                if not landed.done():
                    landed.set_result(result)
