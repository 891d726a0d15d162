"""OpenTelemetry tracing: one span per execution, ``jobs.job.<name>``.

The span continues the trace the run was enqueued under (its stored ``traceparent``,
``ferry._tracecontext``) and links to the enqueuing span, as OpenTelemetry's messaging
conventions have a consumer's process span do (``messaging.*`` attributes included); a
run enqueued outside any span starts a trace of its own.

Only ``opentelemetry-api`` is required (``ferry[otel]``): until an application installs a
``TracerProvider`` no span is opened at all (even a no-op span costs a context switch per
run on the hot path). Without the API installed there is no provider to install, so there
is nothing to refuse: no span is ever opened. The span is the current span while the body
runs, so the body's own spans (HTTP calls, queries) become its children.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ferry._jobs.observer import ExecutionOutcome, ExecutionReport
from ferry._tracecontext import context_of, tracing
from ferry.drivers.protocol import ClaimedJob

try:
    from opentelemetry import trace
except ModuleNotFoundError:  # no ferry[otel]: tracing() is False for good
    trace = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = ["TRACER_NAME", "execution_span", "producer_span", "tracing"]

TRACER_NAME = "ferry"
_TRACER = trace.get_tracer(TRACER_NAME) if trace is not None else None
"""A proxy: it follows whatever provider the application installs, before or after this."""

_FAILED: frozenset[ExecutionOutcome] = frozenset({"retried", "dead", "lease-lost", "superseded"})
"""Outcomes whose span is marked as an error (the attempt failed, its lease lapsed, or the
fence refused its writes — a superseded attempt never claims it completed)."""


@contextmanager
def producer_span(name: str, attributes: dict[str, str | int]) -> Iterator[None]:
    """A span the runs enqueued inside it are traced under (a scheduler tick's enqueue):
    nothing at all unless ``tracing()``."""
    if _TRACER is None or not tracing():
        yield
        return
    with _TRACER.start_as_current_span(name, kind=trace.SpanKind.PRODUCER, attributes=attributes):
        yield


@contextmanager
def execution_span(claimed: ClaimedJob) -> Iterator[Callable[[ExecutionReport], None]]:
    """Open the attempt's span; the yielded function records how the attempt ended (only
    called once ``tracing()`` said a provider records)."""
    assert _TRACER is not None
    enqueued = context_of(claimed.traceparent)
    links = (
        [trace.Link(trace.get_current_span(enqueued).get_span_context())]
        if enqueued is not None
        else []
    )
    with _TRACER.start_as_current_span(
        f"jobs.job.{claimed.name}",
        context=enqueued,
        kind=trace.SpanKind.CONSUMER,
        links=links,
        attributes={
            "job.id": claimed.id,
            "job.name": claimed.name,
            "job.attempt": claimed.attempt,
            "job.queue": claimed.queue,
            "messaging.system": "ferry",
            "messaging.operation.type": "process",
            "messaging.destination.name": claimed.queue,
            "messaging.message.id": claimed.id,
        },
    ) as span:
        try:
            yield lambda report: _record(span, report)
        except asyncio.CancelledError:
            # The worker stopped waiting (drain deadline): nothing was settled.
            span.set_attribute("job.outcome", "abandoned")
            raise


def _record(span: Span, report: ExecutionReport) -> None:
    span.set_attribute("job.outcome", report.outcome)
    span.set_attribute("job.duration_ms", report.duration_ms)
    if report.code is not None:
        span.set_attribute("job.error.code", report.code)
    if report.outcome in _FAILED:
        span.set_status(trace.Status(trace.StatusCode.ERROR, f"{report.code}: {report.message}"))
