"""``ferry jobs show`` of a run whose input is megabytes: a bounded preview with a note,
``--full`` for all of it, the stored values as stored under ``--json``."""

from __future__ import annotations

import json

import pytest

from ferry.drivers import postgres_job_driver
from ferry.drivers.protocol import EnqueueRequest

from .conftest import Ferry

BLOB_CHARS = 8 * 1024 * 1024  # a driver built with a raised limit stores this; main's took ~20 s


@pytest.fixture
async def big_run(postgres_dsn: str, pg_schema: str) -> str:
    driver = postgres_job_driver(postgres_dsn, schema=pg_schema, max_payload_bytes=16 << 20)
    try:
        payload = {"snake_key": 1, "blob": "x" * BLOB_CHARS}
        result = await driver.enqueue(EnqueueRequest("big", "default", payload, "big", 3))
    finally:
        await driver.close()
    return result.job_id


def test_a_large_input_is_shown_as_a_preview_that_says_what_it_left_out(
    ferry: Ferry, big_run: str
) -> None:
    result = ferry("jobs", "show", big_run)
    assert result.code == 0, result.stderr
    assert len(result.stdout) < 10_000
    assert f"more characters; `ferry jobs show {big_run} --full` prints everything" in (
        result.stdout.replace("\n", "")
    )


def test_full_prints_the_whole_input_after_the_tables(ferry: Ferry, big_run: str) -> None:
    result = ferry("jobs", "show", big_run, "--full")
    assert result.code == 0, result.stderr
    head, _, whole = result.stdout.partition("\ninput:\n")
    assert "(printed whole below)" in head
    assert json.loads(whole.splitlines()[0]) == {"snake_key": 1, "blob": "x" * BLOB_CHARS}


def test_json_carries_the_input_as_stored_not_camel_cased(ferry: Ferry, big_run: str) -> None:
    payload = ferry("jobs", "show", big_run, "--json").envelope["data"]["payload"]
    assert set(payload) == {"snake_key", "blob"} and len(payload["blob"]) == BLOB_CHARS
