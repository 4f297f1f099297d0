"""What per-request telemetry costs a server: ``tools/call`` over stdio and Streamable HTTP.

Run from the repository root::

    python bench/telemetry.py             # full run: 5 rounds, about 6 minutes
    python bench/telemetry.py --quick     # smoke run: 1 round, few requests
    python bench/telemetry.py --no-http   # stdio only
    python bench/telemetry.py --profile tracing   # then py-spy one stdio server in that mode

One server script (``bench/servers/telemetry_echo.py``: ``MCPServer`` with an ``echo`` tool),
started fresh for each measurement with the telemetry ``TRIMCP_BENCH_TELEMETRY`` names:

* **off**: nothing installed: the hot paths see an empty slot;
* **seam**: an observer whose probes record nothing: the cost of the hooks themselves;
* **metrics**: Prometheus ``RequestMetrics`` (a counter and a histogram per request);
* **tracing**: OpenTelemetry spans only (SDK tracer provider, a SERVER span per request
  exported to an ``InMemorySpanExporter`` by a ``BatchSpanProcessor``, as ``trimcp serve``
  ships; OpenTelemetry metrics off);
* **tracing10**: tracing with one trace in ten sampled;
* **otel-metrics**: the four OpenTelemetry MCP histograms only (tracing off);
* **all**: metrics, tracing and otel-metrics together.

Beside them, the **OpenTelemetry SDK floor**: what the SDK alone costs per request in this
process (``start_span`` with the same attributes, ``end`` into the same in-memory exporter;
one histogram ``record``), so that trimcp's part can be told apart; and the **least a span
can cost**: the three SDK objects any span handed to the SDK's processors needs (two ids and
its ``SpanContext``, the finished ``ReadableSpan``, the ``BatchSpanProcessor``'s
``on_end``), made in a loop with nothing else.

Over stdio the client is ``bench/stdio.py``'s: one thread doing blocking I/O on the pipes,
checking every answer, keeping D requests in flight (D = 1 and 32). Over HTTP (the daemon's
own transport: ``trimcp serve`` serves Streamable HTTP) it is ``bench/_http_load.py``'s
throughput job: 16 keep-alive connections, each its own session, one request at a time.
Per measurement: requests/s, p50, and the server's CPU per request (``/proc/<pid>/stat``
utime + stime over the timed part; the server is one process, so its exporter's work is
counted too). Rounds rotate the order of the modes; tables show medians, a ratio is the
median of the per-round ratios with its range. The cost of a mode is its server CPU per
request over off's, minus one: the targets are <= 5 % for metrics and <= 15 % for tracing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import stdio  # bench/stdio.py: the server process and the load it is driven with

if TYPE_CHECKING:
    from types import FrameType

BENCH = Path(__file__).resolve().parent
SPEC = stdio.ServerSpec(
    "telemetry", "trimcp MCPServer echo", BENCH / "servers" / "telemetry_echo.py"
)
SERVER = BENCH / "servers" / "telemetry_echo.py"
LOAD = BENCH / "_http_load.py"
ROOT = BENCH.parent
MODES = ("off", "seam", "metrics", "tracing", "tracing10", "otel-metrics", "all")
HTTP_MODES = ("off", "metrics", "tracing", "otel-metrics", "all")
DEPTHS = (1, 32)
HTTP = 16  # the HTTP rows' "D": keep-alive connections, one request in flight each
TARGETS = {"metrics": 0.05, "tracing": 0.15}
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Sample:
    rate: float
    p50_ms: float
    server_cpu_us: float


@dataclass
class Runs:
    """Samples by (mode, depth), in round order (one per round)."""

    samples: dict[tuple[str, int], list[Sample]] = field(default_factory=dict)

    def add(self, mode: str, depth: int, sample: Sample) -> None:
        self.samples.setdefault((mode, depth), []).append(sample)

    def median(self, mode: str, depth: int, attr: str) -> float:
        return statistics.median(getattr(s, attr) for s in self.samples[mode, depth])

    def ratios(self, mode: str, depth: int, attr: str) -> list[float]:
        ons, offs = self.samples[mode, depth], self.samples["off", depth]
        return [getattr(a, attr) / getattr(b, attr) for a, b in zip(ons, offs, strict=True)]


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU time so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def measure(mode: str, requests: dict[int, int], warmup: int) -> dict[int, Sample]:
    """One fresh server in ``mode``: handshake, warm-up, then one measurement per depth."""
    os.environ["TRIMCP_BENCH_TELEMETRY"] = mode
    server = stdio.ServerProcess(SPEC)
    try:
        server.handshake()
        next_id = 10
        stdio.drive(server, 32, warmup, next_id)
        next_id += warmup
        found = {}
        for depth in DEPTHS:
            before = cpu_seconds(server.proc.pid)
            measured = stdio.drive(server, depth, requests[depth], next_id)
            spent = cpu_seconds(server.proc.pid) - before
            next_id += requests[depth]
            found[depth] = Sample(
                rate=measured.rate,
                p50_ms=measured.p50_ms,
                server_cpu_us=spent / requests[depth] * 1e6,
            )
        return found
    finally:
        server.close()


def measure_http(mode: str, warmup: float, duration: float) -> Sample:
    """One fresh HTTP server in ``mode``; ``_http_load.py``'s throughput job against it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["TRIMCP_BENCH_TELEMETRY"] = mode
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--http"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env=env,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline().decode()
        if not line.startswith("PORT "):
            raise SystemExit(f"the HTTP server in mode {mode} did not start: {line!r}")
        job = {
            "kind": "throughput",
            "port": int(line.split()[1]),
            "mode": "mcp",
            "connections": HTTP,
            "warmup": warmup,
            "duration": duration,
            "pid": server.pid,
        }
        load = subprocess.run(
            [sys.executable, "-P", str(LOAD), json.dumps(job)],
            capture_output=True,
            cwd=ROOT,
            env=env,
            timeout=warmup + duration + 60,
            check=False,
        )
        answer = json.loads(load.stdout.decode().strip().splitlines()[-1])
        if "error" in answer:
            raise SystemExit(f"HTTP load in mode {mode}: {answer['error']}")
        return Sample(answer["rate"], answer["p50_ms"], answer["server_cpu_us"])
    finally:
        if server.stdin is not None:
            server.stdin.close()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def sdk_floor(requests: int = 5_000) -> tuple[float, float, float]:
    """µs of CPU the OpenTelemetry SDK alone spends on one span, on one histogram record, and
    on the least any span handed to its processors needs (see the module docstring)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    exporter = InMemorySpanExporter(max_spans=10_000)
    tracer_provider = TracerProvider()
    # As the servers' tracing mode: a batch processor (a queue long enough that it never
    # drops a span), whose thread's work is counted by process_time.
    processor = BatchSpanProcessor(exporter, max_queue_size=requests)
    tracer_provider.add_span_processor(processor)
    tracer = tracer_provider.get_tracer("floor")
    histogram = (
        MeterProvider(metric_readers=[InMemoryMetricReader()])
        .get_meter("floor")
        .create_histogram("mcp.server.operation.duration", unit="s")
    )
    shared = {
        "mcp.method.name": "tools/call",
        "network.transport": "pipe",
        "mcp.protocol.version": "2025-11-25",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
    }
    ids = RandomIdGenerator()
    flags = TraceFlags(TraceFlags.SAMPLED)
    unset = Status(StatusCode.UNSET)
    server = SpanKind.SERVER
    resource = tracer_provider.resource
    best_span = best_record = best_least = float("inf")
    for _ in range(5):
        exporter.clear()
        started = time.process_time()
        for number in range(requests):
            attributes = {**shared, "jsonrpc.request.id": str(number), "mcp.session.id": "s-1"}
            span = tracer.start_span("tools/call echo", kind=SpanKind.SERVER, attributes=attributes)
            span.end()
        tracer_provider.force_flush()
        best_span = min(best_span, (time.process_time() - started) / requests * 1e6)
        started = time.process_time()
        for _number in range(requests):
            histogram.record(0.001, shared)
        best_record = min(best_record, (time.process_time() - started) / requests * 1e6)
        started = time.process_time()
        for _number in range(requests):
            context = SpanContext(ids.generate_trace_id(), ids.generate_span_id(), False, flags)
            # Positional, as trimcp makes them: name, context, parent, resource, attributes,
            # events, links, kind, instrumentation info, status, start, end.
            finished = ReadableSpan(
                "tools/call echo",
                context,
                None,
                resource,
                shared,
                (),
                (),
                server,
                None,
                unset,
                1,
                2,
            )
            processor.on_end(finished)
        tracer_provider.force_flush()
        best_least = min(best_least, (time.process_time() - started) / requests * 1e6)
    return best_span, best_record, best_least


def print_results(runs: Runs, modes: tuple[str, ...], depths: tuple[int, ...], label: str) -> None:
    rows = [
        [
            mode,
            label,
            str(depth),
            f"{runs.median(mode, depth, 'rate'):,.0f}",
            f"{runs.median(mode, depth, 'p50_ms'):.3f}",
            f"{runs.median(mode, depth, 'server_cpu_us'):.1f}",
        ]
        for mode in modes
        for depth in depths
    ]
    stdio.print_table(["telemetry", "transport", "D", "req/s", "p50 ms", "server CPU µs/req"], rows)
    print()
    rows = []
    for mode in modes[1:]:
        for depth in depths:
            cpu = runs.ratios(mode, depth, "server_cpu_us")
            rate = runs.ratios(mode, depth, "rate")
            cost = statistics.median(cpu) - 1.0
            target = TARGETS.get(mode)
            verdict = "" if target is None else ("MET" if cost <= target else "MISS")
            rows.append(
                [
                    f"{mode} / off",
                    label,
                    str(depth),
                    f"{statistics.median(rate):.3f}x ({min(rate):.3f}-{max(rate):.3f})",
                    f"{statistics.median(cpu):.3f}x ({min(cpu):.3f}-{max(cpu):.3f})",
                    f"{cost * 100:+.1f} %",
                    "" if target is None else f"<= {target * 100:.0f} %",
                    verdict,
                ]
            )
    stdio.print_table(
        [
            "ratio",
            "transport",
            "D",
            "req/s (range)",
            "server CPU/req (range)",
            "cost",
            "target",
            "result",
        ],
        rows,
    )
    print()


def profile(mode: str, seconds: float) -> None:
    """Sample one server in ``mode`` with py-spy while it serves D = 32 load."""
    spy = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if spy is None:
        print("py-spy not found: no profile")
        return
    os.environ["TRIMCP_BENCH_TELEMETRY"] = mode
    server = stdio.ServerProcess(SPEC)
    out = Path(f"/tmp/trimcp-telemetry-{mode}.txt")
    try:
        server.handshake()
        recorder = subprocess.Popen(
            [spy, "record", "--pid", str(server.proc.pid), "--duration", str(int(seconds)),
             "--rate", "200", "--format", "raw", "--output", str(out)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        next_id = 10
        deadline = time.monotonic() + seconds + 1
        while time.monotonic() < deadline and recorder.poll() is None:
            stdio.drive(server, 32, 2000, next_id)
            next_id += 2000
        recorder.wait(timeout=30)
    finally:
        server.close()
    print(f"py-spy samples (collapsed stacks) of mode {mode}: {out}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="one round, few requests")
    parser.add_argument("--repeats", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--requests", type=int, default=20_000, help="requests at D = 32")
    parser.add_argument("--profile", choices=MODES, help="then py-spy one server in this mode")
    parser.add_argument("--profile-seconds", type=float, default=10.0)
    parser.add_argument(
        "--modes",
        type=lambda text: tuple(text.split(",")),
        default=MODES,
        help=f"comma-separated, off first (default {','.join(MODES)})",
    )
    parser.add_argument("--no-http", action="store_true", help="stdio only")
    parser.add_argument("--http-seconds", type=float, default=3.0, help="HTTP timed window")
    args = parser.parse_args()
    modes: tuple[str, ...] = args.modes
    if modes[0] != "off" or not set(modes) <= set(MODES):
        parser.error(f"--modes: off first, then any of {', '.join(MODES[1:])}")
    http_modes = tuple(mode for mode in HTTP_MODES if mode in modes)
    repeats = 1 if args.quick else max(1, args.repeats)
    n32 = 2_000 if args.quick else max(100, args.requests)
    requests = {1: max(100, n32 // 4), 32: n32}
    warmup = max(200, n32 // 10)
    print(
        f"# telemetry cost: {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {repeats} round(s), {requests[1]:,} requests at D=1 and "
        f"{requests[32]:,} at D=32 per measurement"
    )
    runs = Runs()
    http_runs = Runs()
    http_seconds = 1.0 if args.quick else args.http_seconds
    for round_number in range(repeats):
        shift = round_number % len(modes)
        for mode in modes[shift:] + modes[:shift]:
            for depth, sample in measure(mode, requests, warmup).items():
                runs.add(mode, depth, sample)
        if not args.no_http:
            shift = round_number % len(http_modes)
            for mode in http_modes[shift:] + http_modes[:shift]:
                http_runs.add(mode, HTTP, measure_http(mode, 1.0, http_seconds))
        print(f"round {round_number + 1}/{repeats} done", file=sys.stderr)
    print_results(runs, modes, DEPTHS, "stdio")
    if not args.no_http:
        print_results(http_runs, http_modes, (HTTP,), "http")
    span, record, least = sdk_floor()
    print(
        f"OpenTelemetry SDK floor (best of 5): start_span + end {span:.1f} µs, "
        f"histogram record {record:.1f} µs; the least a span costs (ids, SpanContext, "
        f"ReadableSpan, BatchSpanProcessor.on_end) {least:.1f} µs"
    )
    if args.profile:
        profile(args.profile, args.profile_seconds)
    return 0


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    try:
        code = main()
    finally:
        stdio.kill_all()
    sys.exit(code)
