"""``backfill(...)``: a job that pages through a source, checkpointing after each page.

The checkpoint (the cursor of the next page) is a record of the driver's ``RecordStore``
(``ferry._backfill.ledger``), so a backfill that is cancelled, drained or killed resumes
from its last checkpoint instead of from the start. A driver without records refuses a
worker that declares a backfill (``X_DRIVER_CAPABILITY``) rather than run one that could
not resume.
``handle`` runs before its page's checkpoint lands, so an attempt that dies between the
two hands the same page to the next attempt: ``handle`` must be idempotent (an upsert, an
update whose second run changes nothing).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from ferry._backfill.ledger import BackfillCheckpoint, BackfillLedger
from ferry._duration import Duration
from ferry._jobs.context import JobContext
from ferry._jobs.declaration import JobHandle, job
from ferry._jobs.facade import current_job_driver
from ferry._jobs.policy import Retry
from ferry._payload import to_json
from ferry.drivers.capabilities import RECORDS
from ferry.drivers.protocol import JsonValue
from ferry.errors import FerryError

InputT = TypeVar("InputT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class BackfillPage:
    """One page of the source: its items, and the cursor of the next page (``None``: this
    was the last one). The cursor is stored, so it must have a JSON form."""

    items: Sequence[Any]
    next_cursor: JsonValue = None


PageSource = Callable[[InputT, JsonValue], Awaitable[BackfillPage]]
PageHandler = Callable[[InputT, Sequence[Any]], Awaitable[None]]


def backfill(
    *,
    input: type[InputT],
    idempotency_key: Callable[[InputT], str],
    page: PageSource[InputT],
    handle: PageHandler[InputT],
    total: Callable[[InputT], Awaitable[int | None]] | None = None,
    tenant: Callable[[InputT], str | None] | None = None,
    retry: Retry | None = None,
    timeout: Duration | None = None,
    queue: str = "default",
    name: str | None = None,
) -> JobHandle[InputT, dict[str, Any]]:
    """Declare a backfill: ``page(input, cursor)`` fetches the page after ``cursor``
    (``None`` first), ``handle(input, items)`` applies it, ``total(input)`` (optional) says
    how many items to expect, for progress. The idempotency key names the backfill and
    keys its checkpoint: a new pass over the same data needs a new key."""
    pass_ = _Pass(page=page, handle=handle, total=total)

    async def run(input: InputT, ctx: JobContext, progress: Callable[[int, int], None]) -> Any:
        return await pass_.run(input, ctx, progress)

    declare = job(
        input=input,
        idempotency_key=idempotency_key,
        tenant=tenant,
        retry=retry,
        timeout=timeout,
        queue=queue,
        name=name,
    )
    declared = declare(run)
    declared.definition.needs = (RECORDS,)
    return declared


class _Pass:
    """The body of every backfill run: resume, page, handle, checkpoint, repeat."""

    def __init__(
        self,
        *,
        page: PageSource[Any],
        handle: PageHandler[Any],
        total: Callable[[Any], Awaitable[int | None]] | None,
    ) -> None:
        self.page = page
        self.handle = handle
        self.total = total

    async def run(
        self, input: Any, ctx: JobContext, progress: Callable[[int, int], None]
    ) -> dict[str, Any]:
        driver = current_job_driver()
        ledger = BackfillLedger(driver)
        key = ctx.idempotency_key
        saved = await ledger.load(key)
        if saved is None:
            saved = BackfillCheckpoint(key, None, 0, 0, False, driver.clock.now_ms())
        resumed_from = saved.cursor
        expected = await self.total(input) if self.total is not None else None
        checkpoint = saved
        while not checkpoint.done:
            ctx.signal.throw_if_aborted()
            fetched = await self.page(input, checkpoint.cursor)
            if fetched.items:
                await self.handle(input, fetched.items)
            cursor = to_json(fetched.next_cursor, what=f'backfill "{ctx.name}" cursor')
            checkpoint = BackfillCheckpoint(
                key=key,
                cursor=cursor,
                processed=checkpoint.processed + len(fetched.items),
                pages=checkpoint.pages + 1,
                done=cursor is None,
                updated_at_ms=driver.clock.now_ms(),
            )
            if not await ledger.save(checkpoint, job_id=ctx.job_id, worker_id=ctx.worker_id):
                raise FerryError(
                    "X_LEASE_LOST",
                    f'backfill "{ctx.name}" run {ctx.job_id} is no longer held by worker '
                    f"{ctx.worker_id}, so its checkpoint was not saved",
                    "nothing: the worker now holding the run continues from the last checkpoint",
                )
            progress(checkpoint.processed, max(expected or 0, checkpoint.processed))
        return {
            "processed": checkpoint.processed,
            "pages": checkpoint.pages,
            "resumedFrom": resumed_from,
        }
