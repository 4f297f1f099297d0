"""The OpenTelemetry SDK's providers, built from an ``OtelPlan`` (``_setup.configure_otel``).

Kept apart so that importing it is the test of whether ``trimcp[otel]`` is installed: the
SDK and the OTLP exporter are imported here and nowhere else. The console exporters write
to stderr, never stdout, which carries MCP itself under ``trimcp serve --stdio``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import MetricExporter
    from opentelemetry.sdk.trace.export import SpanExporter

    from ._plan import OtelPlan

__all__ = ["build_providers"]


def build_providers(
    plan: OtelPlan, console: TextIO
) -> tuple[TracerProvider | None, MeterProvider | None]:
    """Return the tracer and meter providers ``plan`` asks for (None where it asks none).

    An exporter of ``"none"`` still gets a provider, so that spans are sampled and made
    (a ``traceparent`` still goes upstream) but exported nowhere.
    """
    resource = Resource.create({SERVICE_NAME: plan.service_name})
    tracer_provider = None
    if plan.traces_exporter is not None:
        tracer_provider = TracerProvider(
            resource=resource, sampler=ParentBased(TraceIdRatioBased(plan.sample_ratio))
        )
        span_exporter: SpanExporter | None = None
        if plan.traces_exporter == "otlp":
            span_exporter = OTLPSpanExporter(endpoint=f"{plan.endpoint}/v1/traces")
        elif plan.traces_exporter == "console":
            span_exporter = ConsoleSpanExporter(out=console)
        if span_exporter is not None:
            tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    meter_provider = None
    if plan.metrics_exporter is not None:
        metric_exporter: MetricExporter | None = None
        if plan.metrics_exporter == "otlp":
            metric_exporter = OTLPMetricExporter(endpoint=f"{plan.endpoint}/v1/metrics")
        elif plan.metrics_exporter == "console":
            metric_exporter = ConsoleMetricExporter(out=console)
        readers = []
        if metric_exporter is not None:
            interval = plan.metric_export_interval * 1000.0
            readers.append(
                PeriodicExportingMetricReader(metric_exporter, export_interval_millis=interval)
            )
        meter_provider = MeterProvider(resource=resource, metric_readers=readers)
    return tracer_provider, meter_provider
