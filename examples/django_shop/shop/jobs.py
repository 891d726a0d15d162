"""The shop's jobs: sync bodies with Django ORM code (they run on the worker's threads)."""

from datetime import UTC, datetime

from pydantic import BaseModel

from ferry import SyncStep, job
from shop.models import DailyReport, Order


class ReceiptInput(BaseModel):
    order_id: int


@job(input=ReceiptInput, idempotency_key=lambda i: f"receipt:{i.order_id}")
def send_receipt(input: ReceiptInput, step: SyncStep) -> str:
    order = Order.objects.get(pk=input.order_id)
    step.run("mail", lambda: f"receipt for order {order.pk} to {order.email}")
    Order.objects.filter(pk=order.pk).update(receipt_sent=True)
    return order.email


class ReportInput(BaseModel):
    occurrence_ms: int


@job(input=ReportInput, idempotency_key=lambda i: f"daily-report:{i.occurrence_ms}")
def daily_report(input: ReportInput) -> int:
    day = datetime.fromtimestamp(input.occurrence_ms / 1000, UTC).date()
    count = Order.objects.count()
    DailyReport.objects.update_or_create(day=day, defaults={"orders": count})
    return count
