"""A high-priority job for the claim-order tests."""

from __future__ import annotations

from ferry import job

from .jobs_fixture import Item


@job(input=Item, idempotency_key=lambda i: f"urgent:{i.id}", priority=10, name="conformance.urgent")
async def urgent(input: Item) -> None:
    return None
