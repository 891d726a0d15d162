"""OpenTelemetry tracing: one span per execution, ``jobs.job.<name>``.

Only ``opentelemetry-api`` is required (``ferry[otel]``): until an application installs a
``TracerProvider`` no span is opened at all (even a no-op span costs a context switch per
run on the hot path). Without the API installed there is no provider to install, so there
is nothing to refuse: no span is ever opened. The span is the current span while the body
runs, so the body's own spans (HTTP calls, queries) become its children.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ferry._jobs.observer import ExecutionOutcome, ExecutionReport
from ferry.drivers.protocol import ClaimedJob

try:
    from opentelemetry import trace
except ModuleNotFoundError:  # no ferry[otel]: tracing() is False for good
    trace = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from opentelemetry.trace import Span

TRACER_NAME = "ferry"
_PROVIDER_FROM_ENV = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
"""A provider named in the environment is loaded by the first get_tracer_provider()."""
_UNKNOWN = object()
_TRACER = trace.get_tracer(TRACER_NAME) if trace is not None else None
"""A proxy: it follows whatever provider the application installs, before or after this."""

_FAILED: frozenset[ExecutionOutcome] = frozenset({"retried", "dead", "lease-lost", "superseded"})
"""Outcomes whose span is marked as an error (the attempt failed, its lease lapsed, or the
fence refused its writes — a superseded attempt never claims it completed)."""


def tracing() -> bool:
    """Whether a provider that records spans is installed (checked per run: an application
    may install one after the worker started)."""
    # Until a provider is set, the API's get_tracer_provider() looks the environment up on
    # every call — more than the rest of a no-op run's bookkeeping costs. Its module global
    # answers the common case first (an API without that global takes the slow path).
    if trace is None:
        return False
    if getattr(trace, "_TRACER_PROVIDER", _UNKNOWN) is None and not _PROVIDER_FROM_ENV:
        return False
    # The providers in place while no SDK is installed: every span would be dropped.
    not_recording = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
    return not isinstance(trace.get_tracer_provider(), not_recording)


@contextmanager
def execution_span(claimed: ClaimedJob) -> Iterator[Callable[[ExecutionReport], None]]:
    """Open the attempt's span; the yielded function records how the attempt ended (only
    called once ``tracing()`` said a provider records)."""
    assert _TRACER is not None
    with _TRACER.start_as_current_span(
        f"jobs.job.{claimed.name}",
        kind=trace.SpanKind.CONSUMER,
        attributes={
            "job.id": claimed.id,
            "job.name": claimed.name,
            "job.attempt": claimed.attempt,
            "job.queue": claimed.queue,
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
