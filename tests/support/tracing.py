"""Spans recorded in memory by OpenTelemetry's SDK, for the tests that read them.

The SDK's provider is global and can be set once per process, so every test module that
records spans shares one: ``recording`` installs it if nothing has yet, adds a processor
for the module's own exporter, and stops that exporter when the module ends (it then keeps
no span of the tests that run later)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@contextmanager
def recording(exporter: InMemorySpanExporter) -> Iterator[None]:
    """Spans of every tracer go to ``exporter`` while the block runs."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        yield
    finally:
        exporter.shutdown()
        exporter.clear()
