"""stdio ``tools/call`` throughput and latency: trimcp against the official SDK and a raw floor.

Run from the repository root::

    python bench/stdio.py                   # full run, about 3 minutes
    python bench/stdio.py --quick           # smoke run, ~1/10 of the requests
    python bench/stdio.py --requests 40000  # requests per measurement at 32 in flight

Every server in ``bench/servers/`` serves the same ``echo`` tool over stdio and is started
as a subprocess with pipes. The load generator here is one thread doing plain blocking I/O on
the pipes' file descriptors (``os.write`` of whole batches, ``poll`` + ``os.read`` with manual
line splitting, orjson), so it costs a few µs of CPU per request; its CPU per request is
printed, and the raw floor shows it is far faster than any MCP server measured.

One *run* of a server is a fresh process: MCP handshake (``initialize`` with protocol version
2025-11-25, its response, ``notifications/initialized``), a ``tools/list`` that must list
``echo``, then for depth 1 and depth 32: a warm-up, then ``tools/call`` requests keeping
exactly D in flight (a new request is written as soon as a response arrives; all replacements
for one ``os.read`` go out in one write). Each request's latency is send → response; a
measurement's rate is requests / wall time from the first send to the last response. Every
response is validated (the id is one in flight, no error, the one text block equals the text
sent, which differs per request), so a broken server cannot look fast.

Servers are run interleaved, one round per repeat (raw, SDK, trimcp, raw, SDK, trimcp, ...) so
all see the same machine load; the table shows medians over ``--repeats`` runs (default 3);
a ratio is the median over rounds of the per-round ratio. The TypeScript SDK figures are the
issue's quoted constants, not measured here. Every subprocess is killed when the script ends,
also on errors and Ctrl-C (and each server exits by itself when its stdin closes).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import platform
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
SERVERS = Path(__file__).resolve().parent / "servers"

# Run as a script, this directory is sys.path[0], where a sibling named like a standard module
# (bench/http.py) would shadow it for the in-process import of trimcp.server below.
if sys.path and Path(sys.path[0] or ".").resolve() == SERVERS.parent:
    del sys.path[0]

PROTOCOL_VERSION = "2025-11-25"
DEPTHS = (1, 32)
READ_TIMEOUT = 30.0  # seconds without any byte from a server before the run fails
READ_SIZE = 1 << 16

# Quoted from the issue; NOT measured here (the TypeScript SDK 1.32 on these machines).
TS_SDK_QUOTED = {1: 11_600.0, 32: 30_000.0}
TARGET_VS_SDK = 10.0

REQUEST = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"echo-%d"}}}\n'  # noqa: E501


@dataclass(frozen=True)
class ServerSpec:
    key: str
    label: str
    script: Path


@dataclass(frozen=True)
class Measurement:
    requests: int
    rate: float  # requests per second
    p50_ms: float
    p99_ms: float
    client_cpu_us: float  # the generator's CPU time per request


@dataclass
class Result:
    spec: ServerSpec
    runs: dict[int, list[Measurement]] = field(default_factory=lambda: {d: [] for d in DEPTHS})
    error: str | None = None
    stderr_notes: list[str] = field(default_factory=list)

    def median(self, depth: int, attr: str) -> float:
        return statistics.median(getattr(m, attr) for m in self.runs[depth])

    def ok(self, depth: int) -> bool:
        return self.error is None and bool(self.runs[depth])


class BenchError(Exception):
    """A server misbehaved (bad response, exit, stall); the row reports it."""


# --- one server process ------------------------------------------------------------------

_LIVE: set[subprocess.Popen[bytes]] = set()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    _LIVE.discard(proc)


def kill_all() -> None:
    for proc in list(_LIVE):
        _kill(proc)


class ServerProcess:
    """A server subprocess driven with blocking I/O on its pipes' file descriptors."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  (closed in close())
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        self.proc = subprocess.Popen(
            [sys.executable, str(spec.script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            cwd=ROOT,
            env=env,
            bufsize=0,
        )
        _LIVE.add(self.proc)
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        self.poller = select.poll()
        self.poller.register(self.rfd, select.POLLIN)
        self.buffer = b""

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.wfd, view) :]
            except BrokenPipeError as exc:
                raise BenchError(f"server closed its stdin{self.stderr_tail()}") from exc

    def read_lines(self) -> list[bytes]:
        """Block until at least one complete line has arrived; return the complete lines."""
        while True:
            if not self.poller.poll(READ_TIMEOUT * 1000):
                raise BenchError(f"no output for {READ_TIMEOUT:g} s{self.stderr_tail()}")
            chunk = os.read(self.rfd, READ_SIZE)
            if not chunk:
                raise BenchError(
                    f"server exited (code {self.proc.poll()}) mid-run{self.stderr_tail()}"
                )
            *lines, self.buffer = (self.buffer + chunk).split(b"\n")
            if lines:
                return lines

    def request(self, request_id: int, method: str, params: dict[str, object]) -> dict[str, object]:
        """One request outside the timed loop; return its result."""
        wire = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.write(orjson.dumps(wire) + b"\n")
        while True:
            for line in self.read_lines():
                if not line.strip():
                    continue
                message = orjson.loads(line)
                if message.get("id") != request_id:
                    continue  # a notification (e.g. a log message); not expected, harmless
                result = message.get("result")
                if not isinstance(result, dict):
                    raise BenchError(f"{method} failed: {message!r}")
                return result

    def handshake(self) -> None:
        result = self.request(
            0,
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "trimcp-bench", "version": "1.0"},
            },
        )
        if result.get("protocolVersion") != PROTOCOL_VERSION:
            raise BenchError(f"initialize negotiated {result.get('protocolVersion')!r}")
        self.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        tools = self.request(1, "tools/list", {}).get("tools")
        names = [t.get("name") for t in tools] if isinstance(tools, list) else []
        if "echo" not in names:
            raise BenchError(f"tools/list has no echo tool: {tools!r}")

    def stderr_tail(self) -> str:
        text = self.stderr_text()
        return f"; stderr: ...{text[-600:]}" if text else ""

    def stderr_text(self) -> str:
        self.stderr.flush()
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace").strip()

    def close(self) -> None:
        """Close stdin (the server's cue to exit), give it a moment, then kill it."""
        # Through the Popen's file object, which owns the fd: a bare os.close would leave
        # that object to close the same number again when collected, by then maybe another
        # server's pipe.
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        _kill(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.stderr.close()


def drive(server: ServerProcess, depth: int, total: int, first_id: int) -> Measurement:
    """Send ``total`` echo calls keeping exactly ``depth`` in flight; time and check each."""
    loads = orjson.loads
    clock = time.perf_counter_ns
    write = server.write
    read_lines = server.read_lines
    sent_at: dict[int, int] = {}
    latencies: list[int] = []
    next_id = first_id
    end_id = first_id + total

    cpu_start = time.thread_time()
    ids = range(next_id, next_id + min(depth, total))
    batch = b"".join([REQUEST % (i, i) for i in ids])
    started = clock()
    write(batch)
    for i in ids:
        sent_at[i] = started
    next_id += len(ids)

    while sent_at:
        lines = read_lines()
        now = clock()
        answered = 0
        for line in lines:
            message = loads(line)
            request_id = message.get("id")
            start = sent_at.pop(request_id, None)
            if start is None:
                if request_id is None and "method" in message:
                    continue  # a server notification
                raise BenchError(f"response for an id not in flight: {line[:200]!r}")
            latencies.append(now - start)
            try:
                text = message["result"]["content"][0]["text"]
            except (KeyError, IndexError, TypeError):
                text = None
            if text != f"echo-{request_id}":
                raise BenchError(f"bad tools/call response: {line[:300]!r}")
            answered += 1
        fresh = min(answered, end_id - next_id)
        if fresh > 0:
            ids = range(next_id, next_id + fresh)
            batch = b"".join([REQUEST % (i, i) for i in ids])
            stamp = clock()
            write(batch)
            for i in ids:
                sent_at[i] = stamp
            next_id += fresh
    elapsed = clock() - started
    cpu = time.thread_time() - cpu_start

    latencies.sort()
    p99_index = min(len(latencies) - 1, int(len(latencies) * 0.99))
    return Measurement(
        requests=total,
        rate=total / (elapsed / 1e9),
        p50_ms=statistics.median(latencies) / 1e6,
        p99_ms=latencies[p99_index] / 1e6,
        client_cpu_us=cpu / total * 1e6,
    )


@dataclass(frozen=True)
class Config:
    repeats: int
    requests: dict[int, int]  # depth -> requests per measurement
    warmup: dict[int, int]


def run_once(result: Result, config: Config) -> None:
    """One fresh process: handshake, then warm-up + measurement at each depth."""
    server = ServerProcess(result.spec)
    try:
        server.handshake()
        next_id = 10
        for depth in DEPTHS:
            drive(server, depth, config.warmup[depth], next_id)
            next_id += config.warmup[depth]
            measurement = drive(server, depth, config.requests[depth], next_id)
            next_id += config.requests[depth]
            result.runs[depth].append(measurement)
        text = server.stderr_text()
        if text:
            result.stderr_notes.append(text[-300:])
    finally:
        server.close()


# --- which servers -----------------------------------------------------------------------


def mcpserver_available() -> str | None:
    """``None`` when ``trimcp.server.MCPServer`` and its bench script exist, else why not."""
    if not (SERVERS / "trimcp_mcpserver.py").exists():
        return "bench/servers/trimcp_mcpserver.py not written yet"
    try:
        module = importlib.import_module("trimcp.server")
    except Exception as exc:  # noqa: BLE001  (a half-written package must not end the run)
        return f"trimcp.server does not import: {exc!r}"
    if not hasattr(module, "MCPServer"):
        return "trimcp.server has no MCPServer yet"
    return None


def server_specs() -> tuple[list[ServerSpec], str | None]:
    specs = [
        ServerSpec("raw", "raw orjson echo loop (floor)", SERVERS / "raw_echo.py"),
        ServerSpec("sdk", "official SDK low-level Server", SERVERS / "sdk_lowlevel.py"),
        ServerSpec("trimcp", "trimcp serve_stdio + RequestHandler", SERVERS / "trimcp_echo.py"),
    ]
    why_not = mcpserver_available()
    if why_not is None:
        specs.append(
            ServerSpec("mcpserver", "trimcp MCPServer @tool", SERVERS / "trimcp_mcpserver.py")
        )
    return specs, why_not


# --- reporting ---------------------------------------------------------------------------


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]

    def fmt(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    print(fmt(headers))
    print("-" * len(fmt(headers)))
    for row in rows:
        print(fmt(row))


def result_rows(results: list[Result]) -> list[list[str]]:
    rows = []
    for result in results:
        for depth in DEPTHS:
            if not result.ok(depth):
                rows.append([result.spec.label, str(depth), "error", "-", "-", "-", "-"])
                continue
            rates = [m.rate for m in result.runs[depth]]
            rows.append(
                [
                    result.spec.label,
                    str(depth),
                    f"{result.median(depth, 'rate'):,.0f}",
                    f"{min(rates):,.0f}-{max(rates):,.0f}",
                    f"{result.median(depth, 'p50_ms'):.3f}",
                    f"{result.median(depth, 'p99_ms'):.3f}",
                    f"{result.median(depth, 'client_cpu_us'):.1f}",
                ]
            )
    return rows


def ratio_row(
    label: str, ours: Result, base: Result, depth: int, target: float | None
) -> list[str]:
    target_text = f">= {target:g}x" if target is not None else "(info)"
    if not (ours.ok(depth) and base.ok(depth)):
        return [label, "-", "-", "-", "-", target_text, "MISS" if target else ""]
    ratios = [o.rate / b.rate for o, b in zip(ours.runs[depth], base.runs[depth], strict=False)]
    ratio = statistics.median(ratios)
    verdict = "" if target is None else ("PASS" if ratio >= target else "MISS")
    return [
        label,
        f"{ours.median(depth, 'rate'):,.0f}",
        f"{base.median(depth, 'rate'):,.0f}",
        f"{ratio:.2f}x",
        f"{min(ratios):.2f}-{max(ratios):.2f}",
        target_text,
        verdict,
    ]


def quoted_row(label: str, ours: Result, depth: int, *, is_target: bool) -> list[str]:
    quoted = TS_SDK_QUOTED[depth]
    target_text = ">= 1x" if is_target else "(info)"
    if not ours.ok(depth):
        return [label, "-", f"{quoted:,.0f}", "-", "-", target_text, "MISS" if is_target else ""]
    ratio = ours.median(depth, "rate") / quoted
    verdict = ("PASS" if ratio >= 1 else "MISS") if is_target else ""
    return [
        label,
        f"{ours.median(depth, 'rate'):,.0f}",
        f"{quoted:,.0f}",
        f"{ratio:.2f}x",
        "-",
        target_text,
        verdict,
    ]


def print_ratios(by_key: dict[str, Result]) -> None:
    raw, sdk = by_key["raw"], by_key["sdk"]
    rows = []
    for key in ("trimcp", "mcpserver"):
        ours = by_key.get(key)
        if ours is None:
            continue
        name = "trimcp" if key == "trimcp" else "MCPServer"
        rows.extend(
            ratio_row(f"{name} / SDK, {depth} in flight", ours, sdk, depth, TARGET_VS_SDK)
            for depth in DEPTHS
        )
        rows.append(quoted_row(f"{name} / TS SDK quoted*, 1 in flight", ours, 1, is_target=True))
        rows.append(quoted_row(f"{name} / TS SDK quoted*, 32 in flight", ours, 32, is_target=False))
        rows.extend(
            ratio_row(f"{name} / raw floor, {depth} in flight", ours, raw, depth, None)
            for depth in DEPTHS
        )
    print_table(["ratio (req/s)", "ours", "base", "ratio", "range", "target", "result"], rows)
    print(
        "* TypeScript SDK figures are quoted from the issue (11,600 and 30,000 req/s), "
        "not measured here."
    )


def print_header(config: Config, quick: bool) -> None:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    print(
        f"stdio tools/call benchmark  ({'--quick' if quick else 'full run'}; "
        f"{config.repeats} fresh processes per server, medians; requests per measurement: "
        + ", ".join(f"{config.requests[d]:,} at depth {d}" for d in DEPTHS)
        + ")"
    )
    python = f"python {platform.python_version()} ({sys.implementation.name})"
    print(f"{python}  orjson {orjson.__version__}")
    print(f"cpus: os.cpu_count()={os.cpu_count()}  usable={affinity}  {platform.platform()}")
    print()


def main(config: Config, quick: bool) -> int:
    print_header(config, quick)
    began = time.perf_counter()
    specs, why_not = server_specs()
    results = [Result(spec) for spec in specs]
    for round_no in range(config.repeats):
        for result in results:
            if result.error is not None:
                continue
            round_began = time.perf_counter()
            try:
                run_once(result, config)
            except BenchError as exc:
                result.error = str(exc)
            status = "error" if result.error else "ok"
            print(
                f"  round {round_no + 1}/{config.repeats}  {result.spec.label}: {status} "
                f"({time.perf_counter() - round_began:.1f} s)",
                flush=True,
            )
    print()
    print_table(
        ["server", "depth", "req/s", "range", "p50 ms", "p99 ms", "client µs/req"],
        result_rows(results),
    )
    print()
    print_ratios({r.spec.key: r for r in results})
    print()
    raw = results[0]
    if raw.ok(32):
        cpu = raw.median(32, "client_cpu_us")
        rate = raw.median(32, "rate")
        busy = rate * cpu / 1e6
        print(
            f"load generator: {cpu:.1f} µs CPU per request against the raw floor at depth 32 "
            f"(one thread), i.e. ~{1e6 / cpu:,.0f} req/s at most; it was {busy:.0%} busy while "
            f"the floor ran at {rate:,.0f} req/s"
            + (", so that floor figure is a lower bound." if busy > 0.8 else ".")
        )
    if why_not is not None:
        print(f"note: MCPServer variant not measured: {why_not}")
    for result in results:
        if result.error is not None:
            print(f"note: {result.spec.label}: {result.error}")
        for text in result.stderr_notes[:1]:
            print(f"note: {result.spec.label} wrote to stderr: {text!r}")
    print(f"total wall time: {time.perf_counter() - began:.1f} s")
    return 1 if any(r.error for r in results) else 0


def parse_args(argv: list[str] | None = None) -> tuple[Config, bool]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smoke run, ~1/10 of the requests")
    parser.add_argument(
        "--requests",
        type=int,
        help="requests per measurement at depth 32 (default 20,000; depth 1 gets a quarter)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per server")
    args = parser.parse_args(argv)
    n32 = args.requests or (2_000 if args.quick else 20_000)
    requests = {1: max(50, n32 // 4), 32: max(64, n32)}
    warmup = {1: max(30, requests[1] // 10), 32: max(64, requests[32] // 20)}
    return Config(repeats=max(1, args.repeats), requests=requests, warmup=warmup), args.quick


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    cfg, is_quick = parse_args()
    try:
        code = main(cfg, is_quick)
    finally:
        kill_all()
    sys.exit(code)
