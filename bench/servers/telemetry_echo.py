"""The ``echo`` tool of ``trimcp_mcpserver.py`` over stdio, with the telemetry
``TRIMCP_BENCH_TELEMETRY`` names (default ``off``):

* ``off``: nothing installed (the slot stays None);
* ``seam``: an observer whose probes record nothing (``trimcp.telemetry.IGNORED``): what
  the hot paths' calls cost by themselves;
* ``metrics``: ``trimcp.telemetry.RequestMetrics`` in a fresh Prometheus registry;
* ``otel``: ``trimcp.telemetry.instrument`` with SDK providers: every span exported to an
  ``InMemorySpanExporter`` (a ``SimpleSpanProcessor``, so the export is paid inline, in the
  request) that forgets what it holds past 10,000 spans, as an exporter that ships them
  away would (holding every span makes the garbage collector's passes ever longer), the
  histograms aggregated by an ``InMemoryMetricReader``;
* ``otel10``: ``otel`` with ``ParentBased(TraceIdRatioBased(0.1))``: one trace in ten
  recorded (the histograms still see every request);
* ``both``: ``metrics`` and ``otel`` together.

Run by ``bench/telemetry.py``; exits when stdin closes.
"""

from __future__ import annotations

import logging
import os
import sys

from trimcp.server import MCPServer
from trimcp.telemetry import IGNORED

server = MCPServer("trimcp-telemetry-echo", "1.0")


@server.tool()
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


class _Seam:
    """An observer that records nothing: every probe is the shared ``IGNORED``."""

    def server_request(self, *args: object) -> object:
        return IGNORED

    client_request = server_session = client_session = server_request


def install(mode: str) -> None:
    """Install the telemetry ``mode`` names (see the module docstring)."""
    if mode == "seam":
        from trimcp import telemetry

        telemetry.install(_Seam())  # type: ignore[arg-type]  # duck-typed, returns IGNORED
    if mode in ("metrics", "both"):
        from prometheus_client import CollectorRegistry

        from trimcp.telemetry import RequestMetrics

        RequestMetrics(CollectorRegistry()).install()
    if mode in ("otel", "otel10", "both"):
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )
        from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

        from trimcp import telemetry

        ratio = 0.1 if mode == "otel10" else 1.0
        tracer_provider = TracerProvider(sampler=ParentBased(TraceIdRatioBased(ratio)))
        exporter = InMemorySpanExporter()

        class Shipped(SimpleSpanProcessor):
            held = 0

            def on_end(self, span: ReadableSpan) -> None:
                super().on_end(span)
                self.held += 1
                if self.held >= 10_000:
                    exporter.clear()
                    self.held = 0

        tracer_provider.add_span_processor(Shipped(exporter))
        meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
        telemetry.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    if mode not in ("off", "seam", "metrics", "otel", "otel10", "both"):
        raise SystemExit(f"unknown telemetry mode {mode!r}: off, seam, metrics, otel, otel10, both")


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    install(os.environ.get("TRIMCP_BENCH_TELEMETRY", "off"))
    server.run_stdio()


if __name__ == "__main__":
    main()
