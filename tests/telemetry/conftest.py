"""SDK providers with in-memory exporters, never the global ones, for each test."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from trimcp import telemetry
from trimcp.telemetry import SLOT, OtelObserver

if TYPE_CHECKING:
    from collections.abc import Iterator


@dataclass
class Otel:
    """An installed ``OtelObserver`` and what it exported."""

    observer: OtelObserver
    spans_exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    tracer_provider: TracerProvider

    def spans(self) -> list[ReadableSpan]:
        return list(self.spans_exporter.get_finished_spans())

    def points(self, name: str) -> list[HistogramDataPoint]:
        """The data points of histogram ``name`` (one per attribute set)."""
        data = self.reader.get_metrics_data()
        found: list[HistogramDataPoint] = []
        if data is None:
            return found
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found.extend(metric.data.data_points)  # type: ignore[arg-type]
        return found


@pytest.fixture(autouse=True)
def empty_slot() -> Iterator[None]:
    """Run each test with nothing installed (an in-process ``configure_logging`` elsewhere
    in the run installs the request log); put back what was there afterwards."""
    before = telemetry.installed()
    for observer in before:
        telemetry.uninstall(observer)
    yield
    for observer in telemetry.installed():
        telemetry.uninstall(observer)
    for observer in before:
        telemetry.install(observer)


@pytest.fixture
def otel() -> Iterator[Otel]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    observer = telemetry.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    try:
        yield Otel(observer, exporter, reader, tracer_provider)
    finally:
        observer.uninstall()
        tracer_provider.shutdown()
        meter_provider.shutdown()
    assert SLOT.observer is None
