"""HTTP/1.1 request framing: trimcp's own parser before and after its strict checks, and h11.

Run from the repository root::

    python bench/http_framing.py                  # full run, about 4 minutes
    python bench/http_framing.py --quick          # smoke run, under a minute
    python bench/http_framing.py --before REF     # the "before" code (default cb9496e)

Two measurements, in one run:

1. Parse cost, in this process: the CPU time to frame one MCP ``tools/call`` POST (a
   realistic head of 8 fields and a 96-byte sized body) and one 4 KiB chunked body (4
   chunks with an extension, and a trailer), by trimcp's parser at ``REF`` (the code before
   the strict framing), trimcp's parser now, and h11 (``h11.Connection(h11.SERVER)`` fed
   the bytes until ``EndOfMessage``; a new connection per request, as the parser is given
   one head at a time). Best of 5 timed batches.
2. End-to-end throughput: ``tools/call echo`` over Streamable HTTP at 1 and 16 keep-alive
   connections (``bench/_http_load.py``, the load generator of ``bench/http.py``, in its own
   process), for trimcp's ``serve_http`` at ``REF`` (``git archive`` of it in a temporary
   folder, first on ``PYTHONPATH``), now, and now with h11 parsing every request head
   (``bench/servers/trimcp_h11_heads.py``). Servers run in rounds in a rotated order; the
   table shows medians and the server's CPU per request.

Every process this script starts is stopped when it ends, also on errors and Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import TYPE_CHECKING, Any

import h11

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
# This folder's http.py must not shadow the standard library's http (trimcp imports it): the
# folder goes last on the path, where bench/http.py still finds its helper modules.
if sys.path and Path(sys.path[0]).resolve() == BENCH:
    sys.path.append(sys.path.pop(0))
# The trimcp measured in this process is this checkout's, whatever is installed.
sys.path.insert(0, str(ROOT))
DEFAULT_BEFORE = "cb9496e"
CONCURRENCY = (1, 16)

HEAD = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n"
    b"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
    b"MCP-Session-Id: 0123456789abcdef0123456789abcdef\r\nMCP-Protocol-Version: 2025-11-25\r\n"
    b"User-Agent: python-httpx/0.28.1\r\nAccept-Encoding: gzip, deflate\r\n"
    b"Content-Length: 96\r\n\r\n"
)
BODY = (
    b'{"jsonrpc":"2.0","id":10000001,"method":"tools/call",'
    b'"params":{"name":"echo","arguments":{"text":"x"}}}'
).ljust(96)
CHUNKED_HEAD = b"POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
CHUNKED = b"".join(b"400;n=%d\r\n%b\r\n" % (n, b"y" * 1024) for n in range(4))
CHUNKED += b"0\r\nX-Checksum: 1\r\n\r\n"


def _load_module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# The server processes and the load generator are bench/http.py's.
_http = _load_module("bench_http", BENCH / "http.py")
ServerSpec = _http.ServerSpec
BenchError = _http.BenchError


# --- 1. parse cost ---------------------------------------------------------------------------


def _best_us(fn: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def _trimcp_sized(parser: ModuleType) -> Callable[[], object]:
    data = HEAD + BODY

    def frame() -> object:
        end = data.find(b"\r\n\r\n") + 4
        head = parser.parse_head(data[:end])
        return data[end : end + head.content_length]

    return frame


def _trimcp_chunked(parser: ModuleType) -> Callable[[], object]:
    def frame() -> object:
        parser.parse_head(CHUNKED_HEAD)
        return parser.ChunkedDecoder().feed(CHUNKED)

    return frame


def _h11(data: bytes) -> Callable[[], object]:
    def frame() -> object:
        connection = h11.Connection(h11.SERVER)
        connection.receive_data(data)
        while not isinstance(connection.next_event(), h11.EndOfMessage):
            pass
        return connection

    return frame


def parse_costs(before: ModuleType, number: int) -> None:
    import trimcp.http._h1_parse as now

    rows = [
        ("trimcp before", _trimcp_sized(before), _trimcp_chunked(before)),
        ("trimcp now", _trimcp_sized(now), _trimcp_chunked(now)),
        ("h11 0.16", _h11(HEAD + BODY), _h11(CHUNKED_HEAD + CHUNKED)),
    ]
    results = {
        name: (_best_us(sized, number), _best_us(chunked, number // 4))
        for name, sized, chunked in rows
    }
    now_sized, now_chunked = results["trimcp now"]
    print("\n1. Parse cost (µs of CPU per request, best of 5 batches)\n")
    print(f"  {'parser':<16}{'MCP POST':>10}{'x now':>8}{'4 KiB chunked':>16}{'x now':>8}")
    for name, (sized, chunked) in results.items():
        print(
            f"  {name:<16}{sized:>10.1f}{sized / now_sized:>8.2f}"
            f"{chunked:>16.1f}{chunked / now_chunked:>8.2f}"
        )


# --- 2. throughput ---------------------------------------------------------------------------


@contextlib.contextmanager
def before_tree(ref: str) -> Iterator[Path]:
    """``trimcp/`` at ``ref``, extracted into a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="trimcp-before-") as folder:
        archive = subprocess.run(
            ["git", "archive", ref, "trimcp"], cwd=ROOT, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        yield Path(folder)


def _check_imports_from(folder: Path) -> None:
    env = _http._env({"PYTHONPATH": str(folder)})
    where = subprocess.run(
        [sys.executable, "-P", "-c", "import trimcp.http._h1 as m; print(m.__file__)"],
        env=env,
        capture_output=True,
        check=True,
        text=True,
    ).stdout.strip()
    if not where.startswith(str(folder)):
        raise SystemExit(f"the 'before' server would import {where}, not the code at the ref")


def throughput(before: Path, repeats: int, warmup: float, duration: float) -> None:
    variants: list[tuple[str, Any, dict[str, str] | None]] = [
        (
            "before",
            ServerSpec("before", "trimcp before", "trimcp_http_server.py"),
            {"PYTHONPATH": str(before)},
        ),
        ("now", ServerSpec("now", "trimcp now", "trimcp_http_server.py"), None),
        ("h11-heads", ServerSpec("h11", "trimcp now, h11 heads", "trimcp_h11_heads.py"), None),
    ]
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for round_no in range(repeats):
        shift = round_no % len(variants)
        for key, spec, env in variants[shift:] + variants[:shift]:
            began = time.perf_counter()
            with _http.server(spec, env) as proc:
                for conns in CONCURRENCY:
                    job = {
                        "kind": "throughput",
                        "port": proc.port,
                        "pid": proc.pid,
                        "mode": "mcp",
                        "connections": conns,
                        "warmup": warmup,
                        "duration": duration,
                    }
                    runs.setdefault((key, conns), []).append(
                        _http.run_load(job, warmup + duration + 60)
                    )
            print(
                f"  round {round_no + 1}/{repeats}  {spec.label}: "
                f"{time.perf_counter() - began:.1f} s",
                flush=True,
            )

    def median(key: str, conns: int, name: str) -> float:
        return statistics.median(run[name] for run in runs[(key, conns)])

    print("\n2. tools/call over Streamable HTTP (SSE answers), medians\n")
    print(f"  {'server':<24}{'conns':>6}{'req/s':>9}{'p50 ms':>8}{'p99 ms':>8}{'srv µs/req':>12}")
    for key, spec, _ in variants:
        for conns in CONCURRENCY:
            print(
                f"  {spec.label:<24}{conns:>6}{median(key, conns, 'rate'):>9.0f}"
                f"{median(key, conns, 'p50_ms'):>8.2f}{median(key, conns, 'p99_ms'):>8.2f}"
                f"{median(key, conns, 'server_cpu_us'):>12.0f}"
            )
    print()
    for conns in CONCURRENCY:
        now = median("now", conns, "rate")
        print(
            f"  {conns:>2} conns: now / before = {now / median('before', conns, 'rate'):.2f}x, "
            f"h11 heads / now = {median('h11-heads', conns, 'rate') / now:.2f}x"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round, short windows")
    parser.add_argument("--before", default=DEFAULT_BEFORE, help="git ref of the 'before' code")
    parser.add_argument("--repeats", type=int, help="throughput rounds (default 3; quick 1)")
    args = parser.parse_args()
    repeats = args.repeats or (1 if args.quick else 3)
    warmup, duration = (1.0, 2.0) if args.quick else (2.0, 5.0)
    print(f"HTTP/1.1 framing; before = {args.before}; Python {sys.version.split()[0]}")
    with before_tree(args.before) as folder:
        _check_imports_from(folder)
        before = _load_module("trimcp_before_h1_parse", folder / "trimcp/http/_h1_parse.py")
        parse_costs(before, 2_000 if args.quick else 20_000)
        print("\n  throughput rounds:")
        try:
            throughput(folder, repeats, warmup, duration)
        finally:
            _http.kill_all()
    return 0


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    raise SystemExit(main())
