"""A one-job app for the task-file tests."""

from __future__ import annotations

from uuid import UUID

from pydantic import BaseModel

from ferry import define_api, job


class NudgeInput(BaseModel):
    org_id: UUID


@job(input=NudgeInput, idempotency_key=lambda i: f"nudge:{i.org_id}", name="nudge_org")
async def nudge_org(input: NudgeInput) -> None:
    """Nothing to do: the tests only read its entries."""


api = define_api(jobs=[nudge_org])
