"""A request's trace reaches the runs it started, on every driver: the enqueuing span's
W3C ``traceparent`` is stored with the run — through the outbox, a scheduler tick and a
fan-out from a job body too — and the execution span continues that trace and links to
the enqueuing span (OpenTelemetry's messaging conventions), with an SDK recording in
memory."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel
from support.tracing import recording

from ferry import define_api, job, task
from ferry._bridge import serve
from ferry._clock import FrozenClock
from ferry._operations import run_json, show_run
from ferry._outbox import JobOutboxPublisher, OutboxRelay
from ferry._tracecontext import trace_id_of
from ferry.drivers.capabilities import OUTBOX, offered
from ferry.drivers.protocol import JobDriver
from ferry.testing import Harness

from .conftest import Append

_exporter = InMemorySpanExporter()
_tracer = trace.get_tracer("ferry.tests")


@pytest.fixture(scope="module", autouse=True)
def _sdk() -> Iterator[None]:
    with recording(_exporter):
        yield


@pytest.fixture(autouse=True)
def _fresh() -> None:
    _exporter.clear()


class Note(BaseModel):
    id: str


@job(input=Note, idempotency_key=lambda i: f"traced-child:{i.id}", name="trace.child")
async def child(input: Note) -> None:
    """A job that does nothing: its span is what the tests read."""


@job(input=Note, idempotency_key=lambda i: f"traced-parent:{i.id}", name="trace.parent")
async def parent(input: Note) -> None:
    """Fans out: enqueues a child from its body, under its own execution span."""
    await child.enqueue({"id": f"of-{input.id}"})


tick = task(
    cron="0 3 * * *",
    tz="UTC",
    enqueue=lambda occurrence_ms: [(child, {"id": f"tick-{occurrence_ms}"})],
    name="trace.tick",
)
API = define_api(jobs=[child, parent])


def _span(name: str) -> ReadableSpan:
    [span] = [s for s in _exporter.get_finished_spans() if s.name == name]
    return span


def _continues(execution: ReadableSpan, enqueuing: ReadableSpan) -> None:
    """``execution`` is a child of ``enqueuing`` in its trace, and links to it."""
    assert execution.context is not None and enqueuing.context is not None
    assert execution.context.trace_id == enqueuing.context.trace_id
    assert execution.parent is not None
    assert execution.parent.span_id == enqueuing.context.span_id
    assert [link.context.span_id for link in execution.links] == [enqueuing.context.span_id]
    assert execution.kind == trace.SpanKind.CONSUMER
    assert (execution.attributes or {})["messaging.operation.type"] == "process"


async def test_a_run_enqueued_under_a_span_runs_in_its_trace(
    harness: Harness, driver: JobDriver
) -> None:
    with harness.installed(), _tracer.start_as_current_span("web.request") as request:
        job_id = (await child.enqueue({"id": "a"})).job_id
    await harness.drain()
    _continues(_span("jobs.job.trace.child"), _span("web.request"))
    run = await show_run(driver, job_id)
    assert trace_id_of(run.traceparent) == format(request.get_span_context().trace_id, "032x")
    assert run_json(run)["traceparent"] == run.traceparent


async def test_a_sync_enqueue_from_a_thread_runs_in_its_callers_trace(
    harness: Harness, driver: JobDriver
) -> None:
    """Sync code (a WSGI view, a sync endpoint's thread) enqueues through the loop the
    driver serves: the span current on the caller's thread is still the one stored."""

    def view() -> str:
        with _tracer.start_as_current_span("web.request"):
            return child.enqueue_sync({"id": "sync"}).job_id

    serve()  # this loop serves the drivers, as an application's lifespan notes it
    with harness.installed():
        job_id = await asyncio.to_thread(view)
    await harness.drain()
    _continues(_span("jobs.job.trace.child"), _span("web.request"))
    assert (await show_run(driver, job_id)).traceparent is not None


async def test_a_run_enqueued_outside_any_span_starts_a_trace_of_its_own(
    harness: Harness, driver: JobDriver
) -> None:
    job_id = (await child.enqueue({"id": "b"})).job_id
    await harness.drain()
    execution = _span("jobs.job.trace.child")
    assert execution.parent is None and execution.links == ()
    assert (await show_run(driver, job_id)).traceparent is None


async def test_a_child_enqueued_by_a_job_body_runs_in_its_parents_trace(
    harness: Harness,
) -> None:
    with _tracer.start_as_current_span("web.request"), harness.installed():
        await parent.enqueue({"id": "c"})
    await harness.drain()
    _continues(_span("jobs.job.trace.parent"), _span("web.request"))
    _continues(_span("jobs.job.trace.child"), _span("jobs.job.trace.parent"))


async def test_an_outbox_entry_carries_its_trace_to_the_run_the_relay_enqueues(
    harness: Harness, driver: JobDriver, append: Append
) -> None:
    if offered(driver, OUTBOX) is None:
        pytest.skip(f"the {driver.name} driver offers no outbox")
    await driver.open()  # (migrated before the application's transaction takes the file)
    with _tracer.start_as_current_span("web.request"):
        await append(child.name, {"id": "d"})
    relay = OutboxRelay(source=driver, publisher=JobOutboxPublisher(API))
    with harness.installed():
        assert (await relay.run_once()).published == 1
    await harness.drain()
    _continues(_span("jobs.job.trace.child"), _span("web.request"))


async def test_a_scheduler_tick_traces_the_runs_it_fires(
    driver: JobDriver, clock: FrozenClock
) -> None:
    harness = Harness(driver=driver, clock=clock, tasks=[tick])
    clock.advance("1d")
    await harness.drain()
    _continues(_span("jobs.job.trace.child"), _span("jobs.task.trace.tick"))
    assert _span("jobs.task.trace.tick").kind == trace.SpanKind.PRODUCER
