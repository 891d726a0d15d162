"""Tracing: one OpenTelemetry span per execution, and the logs retries and dead letters leave."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from pydantic import BaseModel
from support.tracing import recording

from ferry import Retry, job
from ferry._jobs.execute import execute_job
from ferry.drivers.protocol import AckOptions, ClaimOptions, JobDriver, NackOptions
from ferry.testing import Harness

_exporter = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def _sdk() -> Iterator[None]:
    """An SDK provider recording spans in memory (the API alone records nothing); its
    exporter stops when the module ends, so it keeps no span of the tests that run later
    (a worker test counting the memory kept per run would count them)."""
    with recording(_exporter):
        yield


@pytest.fixture(autouse=True)
def _fresh() -> None:
    _exporter.clear()


class Order(BaseModel):
    id: str
    fail: bool = False


@job(
    input=Order,
    idempotency_key=lambda i: f"traced:{i.id}",
    retry=Retry(attempts=2, base="1s"),
    name="tracing.ship",
)
async def ship(input: Order) -> str:
    if input.fail:
        raise RuntimeError("carrier down")
    return "shipped"


async def test_each_execution_is_one_span_named_after_its_job_with_its_outcome() -> None:
    harness = Harness(tasks=[])
    result = await harness.run_jobs(ship, {"id": "a"})
    [span] = _exporter.get_finished_spans()
    assert span.name == "jobs.job.tracing.ship"
    assert span.attributes is not None
    assert span.attributes["job.id"] == result.job_id
    assert span.attributes["job.name"] == "tracing.ship"
    assert span.attributes["job.attempt"] == 1
    assert span.attributes["job.outcome"] == "completed"
    assert isinstance(span.attributes["job.duration_ms"], int)
    assert span.status.status_code == StatusCode.UNSET


async def test_a_retry_logs_a_warning_and_a_dead_letter_an_error_and_marks_its_span(
    caplog: pytest.LogCaptureFixture,
) -> None:
    harness = Harness(tasks=[])
    with caplog.at_level(logging.WARNING, logger="ferry.jobs"):
        await harness.run_jobs(ship, {"id": "b", "fail": True})
    spans = _exporter.get_finished_spans()
    assert [(s.attributes or {}).get("job.outcome") for s in spans] == ["retried", "dead"]
    assert all(s.status.status_code == StatusCode.ERROR for s in spans)
    verdicts = [
        (r.levelname, r.getMessage())
        for r in caplog.records
        if r.getMessage().startswith("jobs.run.")
    ]
    assert verdicts == [("WARNING", "jobs.run.retrying"), ("ERROR", "jobs.run.dead")]


class _OnItsWay:
    """A settler whose settles reach the driver only once ``arrive`` is set: sent while the
    lease still held, answered after it lapsed."""

    def __init__(self, driver: JobDriver) -> None:
        self.driver = driver
        self.sent = asyncio.Event()
        self.arrive = asyncio.Event()

    async def ack(self, job_id: str, options: AckOptions) -> bool:
        self.sent.set()
        await self.arrive.wait()
        return await self.driver.ack(job_id, options)

    async def nack(self, job_id: str, options: NackOptions) -> bool:
        self.sent.set()
        await self.arrive.wait()
        return await self.driver.nack(job_id, options)


async def test_an_attempt_whose_settle_the_fence_refused_never_claims_completion() -> None:
    harness = Harness(tasks=[])
    with harness.installed():
        await ship.enqueue({"id": "c"})
    [mine] = await harness.driver.claim(ClaimOptions(worker_id="w1", lease_ms=1_000))
    settler = _OnItsWay(harness.driver)
    attempt = asyncio.ensure_future(
        execute_job(
            mine,
            driver=harness.driver,
            worker_id="w1",
            lease_ms=1_000,
            heartbeat_interval_ms=2_000,  # no renewal round before the settle answers
            settler=settler,
        )
    )
    await settler.sent.wait()
    harness.clock.advance("1s")  # the lease lapses and another worker takes the run over
    [theirs] = await harness.driver.claim(ClaimOptions(worker_id="w2", lease_ms=1_000))
    assert theirs.id == mine.id
    settler.arrive.set()
    report = await attempt
    [span] = _exporter.get_finished_spans()
    assert report.outcome == "superseded"
    assert (span.attributes or {}).get("job.outcome") == "superseded"
    assert span.status.status_code == StatusCode.ERROR
