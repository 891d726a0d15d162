"""Group commit for settles: the verdicts waiting for the worker's next round trip.

A worker running 32 bodies at once finishes them in bursts; settling each on its own is
one statement and one commit per run. Here a finished run only *submits* its verdict and
awaits the answer: the worker's round-trip loop takes everything submitted since the last
round trip and sends it in one statement, together with the claim for the capacity those
runs just freed (``driver.settle_and_claim``). A lone settle still goes out at once (a
limit-1 key keeps its round-trip speed); a burst costs one round trip, never a timer's wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from ferry.drivers.protocol import AckOptions, NackOptions, Settle


class SettleBatch:
    """Settles taken together for one round trip, and the futures their runs await."""

    __slots__ = ("_answers", "settles")

    def __init__(self, waiting: list[tuple[Settle, asyncio.Future[bool]]]) -> None:
        self.settles: list[Settle] = [settle for settle, _ in waiting]
        self._answers = [answer for _, answer in waiting]

    def __len__(self) -> int:
        return len(self.settles)

    def landed(self, results: Sequence[bool]) -> None:
        """Answer each run with whether its settle landed."""
        for answer, result in zip(self._answers, results, strict=True):
            if not answer.done():
                answer.set_result(result)

    def failed(self, error: BaseException) -> None:
        """Every run hears the failure of the statement that carried its settle."""
        for answer in self._answers:
            if not answer.done():
                answer.set_exception(error)


class SettleQueue:
    """``ack``/``nack`` with the driver's signatures, answered by a later round trip."""

    def __init__(self, on_submit: Callable[[str], None] | None = None) -> None:
        self._waiting: list[tuple[Settle, asyncio.Future[bool]]] = []
        self._on_submit = on_submit
        self.arrived = asyncio.Event()
        """Set when a settle is submitted; the round-trip loop clears it as it takes them."""

    @property
    def pending(self) -> int:
        """How many settles wait for a round trip."""
        return len(self._waiting)

    async def ack(self, job_id: str, options: AckOptions) -> bool:
        return await self._submit((job_id, options))

    async def nack(self, job_id: str, options: NackOptions) -> bool:
        return await self._submit((job_id, options))

    def take(self) -> SettleBatch:
        """Everything submitted so far, for the next round trip."""
        waiting, self._waiting = self._waiting, []
        self.arrived.clear()
        return SettleBatch(waiting)

    async def flush(self, send: Callable[[Sequence[Settle]], Awaitable[list[bool]]]) -> None:
        """Send what waits through ``send``, batch after batch, until nothing waits."""
        while self._waiting:
            batch = self.take()
            try:
                batch.landed(await send(batch.settles))
            except Exception as error:  # every waiter hears the failure of its statement
                batch.failed(error)

    def _submit(self, settle: Settle) -> asyncio.Future[bool]:
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.append((settle, answer))
        self.arrived.set()
        if self._on_submit is not None:
            self._on_submit(settle[0])
        return answer
