"""The W3C trace context a run carries from where it was enqueued to where it runs.

An enqueue made while a span is current — a web request's, a job body's (a fan-out), a
scheduler tick's — stores that span's ``traceparent`` with the run (and an outbox entry
with the entry, which the relay re-activates while it enqueues). The worker's execution
span then continues that trace and links to it, as OpenTelemetry's messaging conventions
have a consumer do, so a request's trace shows the runs it started.

Only ``opentelemetry-api`` is needed (``ferry[otel]``), and only while an application has
installed a provider that records (``tracing()``): otherwise nothing is read, stored or
opened, and the hot path pays one check.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
except ModuleNotFoundError:  # no ferry[otel]: tracing() is False for good
    trace = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from opentelemetry.context import Context

_PROVIDER_FROM_ENV = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
"""A provider named in the environment is loaded by the first get_tracer_provider()."""
_UNKNOWN = object()
_PROPAGATOR = TraceContextTextMapPropagator() if trace is not None else None


def tracing() -> bool:
    """Whether a provider that records spans is installed (checked per call: an
    application may install one after the worker started)."""
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


def current_traceparent() -> str | None:
    """The current span's ``traceparent`` (``00-<trace id>-<span id>-<flags>``), or None
    when nothing is traced here or no span is current."""
    if _PROPAGATOR is None or not tracing():
        return None
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier.get("traceparent")


def context_of(traceparent: str | None) -> Context | None:
    """The context a stored ``traceparent`` names (None for none, or one unreadable)."""
    if _PROPAGATOR is None or not traceparent:
        return None
    context = _PROPAGATOR.extract({"traceparent": traceparent})
    span_context = trace.get_current_span(context).get_span_context()
    return context if span_context.is_valid else None


@contextmanager
def attached(traceparent: str | None) -> Iterator[None]:
    """Make ``traceparent`` the current context for the block (what an enqueue inside it
    then stores): the relay publishing an outbox entry appended under a request's span."""
    context = context_of(traceparent)
    if context is None:
        yield
        return
    token: Any = otel_context.attach(context)
    try:
        yield
    finally:
        otel_context.detach(token)


def trace_id_of(traceparent: str | None) -> str | None:
    """The 32 hex digits of the trace a ``traceparent`` belongs to (what the run page
    shows), or None."""
    if not traceparent:
        return None
    parts = traceparent.split("-")
    return parts[1] if len(parts) == 4 and len(parts[1]) == 32 else None
