"""A job whose input holds an open-ended mapping, to exercise the JSON payload rules."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ferry import job


class Loose(BaseModel):
    id: str
    extra: dict[str, Any]


@job(input=Loose, idempotency_key=lambda i: f"loose:{i.id}", name="conformance.loose")
async def loose(input: Loose) -> None:
    return None
