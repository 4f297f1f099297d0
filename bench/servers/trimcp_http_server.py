"""trimcp's ``MCPServer`` over Streamable HTTP, with the echo tool and the bench's hooks.

Tools (the same in ``sdk_http_server.py``):

* ``echo`` ``{"text": str}``: one text block with the text (the throughput measurement);
* ``progress_flood`` ``{"count": int}``: sends ``count`` ``notifications/progress`` (when
  the call carries a progress token) as fast as it can, then answers;
* ``bench_memory`` ``{"snapshot": str}``: JSON text ``{"traced", "peak", "rss",
  "sessions"}`` after a ``gc.collect()``: tracemalloc's current and peak bytes (0 unless
  tracing, e.g. under ``PYTHONTRACEMALLOC=1``), this process's VmRSS in bytes, the session
  manager's count; with a ``snapshot`` path (and tracing on), a tracemalloc snapshot is
  dumped there too;
* ``bench_profile`` ``{"action": "start" | "stop", "path": str}``: cProfile this process
  (the trio thread) between the two calls; ``stop`` dumps the stats to ``path``.

``--json-response`` answers requests with ``application/json`` instead of SSE
(``HttpOptions(json_response=True)``). Everything else is trimcp's default: resumable SSE
with the in-memory event store, session limits, hypercorn as ``serve_http`` configures it.
``--port 0`` (the default) binds a free port on 127.0.0.1; the bound port is printed as
``PORT <n>`` on stdout once the server accepts connections. The server exits when its stdin
closes.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import json
import logging
import sys
import tracemalloc
from pathlib import Path

import trio

from trimcp.http import HttpListener, HttpOptions
from trimcp.server import Context, MCPServer

server = MCPServer("trimcp-http-bench", "1.0")
_listener: list[HttpListener] = []
_profiler: list[cProfile.Profile] = []


@server.tool()
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


@server.tool()
async def progress_flood(count: int, ctx: Context) -> str:
    """Send ``count`` progress notifications as fast as possible, then answer."""
    for done in range(1, count + 1):
        await ctx.report_progress(done, count)
    return f"sent {count}"


def rss_bytes() -> int:
    """Return this process's resident set size (VmRSS) in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


@server.tool()
def bench_memory(snapshot: str = "") -> str:
    """Report traced and resident memory and the number of live sessions."""
    gc.collect()
    traced, peak = tracemalloc.get_traced_memory() if tracemalloc.is_tracing() else (0, 0)
    if snapshot and tracemalloc.is_tracing():
        tracemalloc.take_snapshot().dump(snapshot)
    sessions = len(_listener[0].manager.table) if _listener else -1
    return json.dumps({"traced": traced, "peak": peak, "rss": rss_bytes(), "sessions": sessions})


@server.tool()
async def bench_profile(action: str, path: str = "") -> str:
    """Start cProfile, or stop it and dump its stats to ``path``."""
    if action == "start" and not _profiler:
        profiler = cProfile.Profile()
        _profiler.append(profiler)
        profiler.enable()
        return "profiling"
    if action == "stop" and _profiler:
        profiler = _profiler.pop()
        profiler.disable()
        profiler.dump_stats(path)
        return f"written to {path}"
    return f"nothing to do for {action!r}"


async def wait_stdin_closed() -> None:
    """Return once stdin reaches end of file (the bench's cue to stop)."""
    await trio.to_thread.run_sync(sys.stdin.buffer.read, abandon_on_cancel=True)


async def main(port: int, json_response: bool) -> None:
    options = HttpOptions(json_response=json_response)
    serve = functools.partial(server.serve_http, host="127.0.0.1", port=port, options=options)
    async with trio.open_nursery() as nursery:
        listener = await nursery.start(serve)
        _listener.append(listener)
        print(f"PORT {listener.url.rsplit(':', 1)[1].split('/', 1)[0]}", flush=True)
        await wait_stdin_closed()
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--json-response", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    trio.run(main, args.port, args.json_response)
