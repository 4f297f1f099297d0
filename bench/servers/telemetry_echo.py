"""The ``echo`` tool of ``trimcp_mcpserver.py`` over stdio (or, with ``--http``, Streamable
HTTP on 127.0.0.1), with the telemetry ``TRIMCP_BENCH_TELEMETRY`` names (default ``off``):

* ``off``: nothing installed (the slot stays None);
* ``seam``: an observer whose probes record nothing (``trimcp.telemetry.IGNORED``): what
  the hot paths' calls cost by themselves;
* ``metrics``: ``trimcp.telemetry.RequestMetrics`` in a fresh Prometheus registry;
* ``tracing``: ``trimcp.telemetry.instrument`` with an SDK tracer provider and OpenTelemetry
  metrics off (a ``NoOpMeterProvider``): every span exported to an ``InMemorySpanExporter``
  through a ``BatchSpanProcessor`` with its default bounds (what ``trimcp serve`` ships: the
  batch is exported on the processor's thread, in this process, so it is counted) that
  keeps the last 10,000 spans (``max_spans``), as an exporter that ships them away holds
  none for long;
* ``tracing10``: ``tracing`` with ``ParentBased(TraceIdRatioBased(0.1))``: one trace in ten;
* ``otel-metrics``: the four MCP histograms only (an SDK meter provider with an
  ``InMemoryMetricReader``), tracing off (a ``NoOpTracerProvider``);
* ``all``: ``metrics``, ``tracing`` and ``otel-metrics`` together.

Run by ``bench/telemetry.py``; over stdio it exits when stdin closes; with ``--http`` it
prints ``PORT <n>`` once it accepts connections and exits when stdin closes.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
from typing import TYPE_CHECKING

import trio

from trimcp.server import MCPServer

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider
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


MODES = ("off", "seam", "metrics", "tracing", "tracing10", "otel-metrics", "all")


def install(mode: str) -> None:
    """Install the telemetry ``mode`` names (see the module docstring)."""
    if mode not in MODES:
        raise SystemExit(f"unknown telemetry mode {mode!r}: {', '.join(MODES)}")
    from trimcp import telemetry

    if mode == "seam":
        telemetry.install(_Seam())  # type: ignore[arg-type]  # duck-typed, returns IGNORED
    if mode in ("metrics", "all"):
        from prometheus_client import CollectorRegistry

        from trimcp.telemetry import RequestMetrics

        RequestMetrics(CollectorRegistry()).install()
    if mode in ("tracing", "tracing10", "otel-metrics", "all"):
        from opentelemetry.metrics import NoOpMeterProvider
        from opentelemetry.trace import NoOpTracerProvider

        tracer_provider = NoOpTracerProvider() if mode == "otel-metrics" else _tracer_provider(mode)
        meter_provider = NoOpMeterProvider() if mode.startswith("tracing") else _meter_provider()
        telemetry.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)


def _tracer_provider(mode: str) -> TracerProvider:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    ratio = 0.1 if mode == "tracing10" else 1.0
    tracer_provider = TracerProvider(sampler=ParentBased(TraceIdRatioBased(ratio)))
    # What ``trimcp serve`` ships (``[otel]``): a batch processor, its default queue and
    # batch sizes; its thread's work is in this process, so the benchmark counts it.
    tracer_provider.add_span_processor(BatchSpanProcessor(InMemorySpanExporter(max_spans=10_000)))
    # A span dropped for a full queue costs less than one exported: it would flatter the
    # figure, so the run fails instead (the benchmark reports the server's exit).
    logging.getLogger("opentelemetry.sdk._shared_internal").addHandler(_DropsFail())
    return tracer_provider


class _DropsFail(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        if "dropping" in record.getMessage():
            sys.stderr.write(f"telemetry_echo: {record.getMessage()}\n")
            sys.stderr.flush()
            os._exit(3)


def _meter_provider() -> MeterProvider:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    return MeterProvider(metric_readers=[InMemoryMetricReader()])


async def serve_http() -> None:
    """Serve over Streamable HTTP on a free port until stdin closes."""
    serve = functools.partial(server.serve_http, host="127.0.0.1", port=0)
    async with trio.open_nursery() as nursery:
        listener = await nursery.start(serve)
        print(f"PORT {listener.url.rsplit(':', 1)[1].split('/', 1)[0]}", flush=True)
        await trio.to_thread.run_sync(sys.stdin.buffer.read, abandon_on_cancel=True)
        nursery.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="Streamable HTTP, not stdio")
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    install(os.environ.get("TRIMCP_BENCH_TELEMETRY", "off"))
    if args.http:
        trio.run(serve_http)
    else:
        server.run_stdio()


if __name__ == "__main__":
    main()
