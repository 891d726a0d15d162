"""The shop's job and task."""

from pydantic import BaseModel
from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert

from fastapi_shop.database import sessions
from fastapi_shop.models import DailyReport, Order
from ferry import Step, job, task


class ReceiptInput(BaseModel):
    order_id: int


@job(input=ReceiptInput, idempotency_key=lambda i: f"receipt:{i.order_id}")
async def send_receipt(input: ReceiptInput, step: Step) -> None:
    await step.run("mail", lambda: f"receipt for order {input.order_id}")
    async with sessions.begin() as session:
        await session.execute(
            update(Order).where(Order.id == input.order_id).values(receipt_sent=True)
        )


class ReportInput(BaseModel):
    occurrence_ms: int


@job(input=ReportInput, idempotency_key=lambda i: f"daily-report:{i.occurrence_ms}")
async def daily_report(input: ReportInput) -> int:
    async with sessions.begin() as session:
        count = (await session.execute(select(func.count()).select_from(Order))).scalar_one()
        await session.execute(
            insert(DailyReport)
            .values(occurrence_ms=input.occurrence_ms, orders=count)
            .on_conflict_do_nothing()
        )
    return int(count)


nightly_report = task(
    cron="0 2 * * *",
    tz="Europe/Berlin",
    enqueue=lambda occurrence_ms: [(daily_report, {"occurrence_ms": occurrence_ms})],
)
