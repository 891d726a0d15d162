"""What the memory driver refuses: it is not durable and has no transactions."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from ferry import FerryError, job, set_job_driver
from ferry.drivers import memory_job_driver


class Note(BaseModel):
    id: str


@job(input=Note, idempotency_key=lambda i: f"note:{i.id}", name="unit.note")
async def note(input: Note) -> None:
    return None


async def test_joining_a_transaction_is_refused_not_silently_ignored() -> None:
    driver = memory_job_driver()
    previous = set_job_driver(driver)
    try:
        with pytest.raises(FerryError) as refused:
            await note.enqueue({"id": "1"}, connection=object())
        assert refused.value.code == "X_DRIVER_NO_TRANSACTIONS"
        assert '"unit.note"' in refused.value.message
        await driver.close()
        with pytest.raises(FerryError) as closed:
            await note.enqueue({"id": "1"})
        assert closed.value.code == "X_DRIVER_CLOSED"
    finally:
        set_job_driver(previous)


async def test_enqueue_without_a_driver_says_how_to_configure_one() -> None:
    previous = set_job_driver(None)
    try:
        with pytest.raises(FerryError) as refused:
            await note.enqueue({"id": "1"})
        assert refused.value.code == "X_DRIVER_UNSET"
        assert "set_job_driver" in refused.value.fix
    finally:
        set_job_driver(previous)
