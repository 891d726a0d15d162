"""The app the ``ferry relay`` process under test runs (``--app outbox.relay_app``)."""

from __future__ import annotations

from pydantic import BaseModel

from ferry import job


class ReceiptInput(BaseModel):
    order_id: str


@job(input=ReceiptInput, idempotency_key=lambda i: f"receipt:{i.order_id}")
async def send_receipt(input: ReceiptInput) -> None:
    """Mails a receipt (the relay only enqueues it; no worker runs here)."""
