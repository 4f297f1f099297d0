"""The raw load generator of ``bench/gateway.py``: the same job as ``_gateway_load.py``, but a
client too cheap to be the bottleneck.

Usage (``bench/gateway.py`` runs it)::

    python -P bench/_gateway_raw.py '{"mode": "http", "url": "http://127.0.0.1:8000/mcp", ...}'

The job and the answer are ``_gateway_load.py``'s (``mode``, ``concurrency``, ``requests``,
``warmup``, ``watch``, ``time_limit``; one JSON line with the tool, and per C the rate,
p50/p99 and CPU per request of this process and of each watched pid), so the bench can
run either worker for any row. What differs is the client, which is the same program for
every row and costs a few tens of µs per call:

* ``mode: "http"``: ``C`` keep-alive HTTP/1.1 connections (HTTP/1.1 carries one request at
  a time per connection), each with a session of its own (``initialize``, then
  ``notifications/initialized``), sending ``tools/call`` back to back. Request heads are
  built and checked by h11 once per session; responses are read by ``_http_load.py``'s
  small parser (JSON or a chunked SSE body).
* ``mode: "stdio"`` ``{server}``: launches the upstream and keeps ``C`` calls in flight on
  its pipes (JSON-RPC lets one stream carry many requests): one writer at a time, one reader
  task that hands each answer line to the call with its id.

Every answer is checked for its own text with a byte search; JSON is parsed only outside
the timed part (the handshake and ``tools/list``).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import trio

sys.path.append(str(Path(__file__).resolve().parent))
from _client_load import cpu_of, cpu_self, job_main
from _gateway_load import LIST_WAIT, find_upstream, pick_tool
from _http_load import Connection, LoadError, initialize, messages_of, request_head

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

PROTOCOL_VERSION = "2025-11-25"
FIRST_ID = 10_000_000  # 8-digit ids and texts: every request body has the same length
CALL_TIMEOUT = 30.0


def body_template(tool: str) -> bytes:
    """A ``tools/call`` body with ``%d`` for the id and ``%08d`` for the text's number."""
    name = json.dumps(tool).encode()
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":'
        + name.replace(b"%", b"%%")
        + b',"arguments":{"text":"c-%08d"}}}'
    )


async def measure(
    call: Callable[[int], Awaitable[None]], concurrency: int, count: int, watch: dict[str, int]
) -> dict[str, Any]:
    """``count`` calls, ``concurrency`` workers (worker i uses channel i); rate, latency, CPU."""
    latencies: list[int] = []
    issued = 0
    clock = time.perf_counter_ns

    async def worker(index: int) -> None:
        nonlocal issued
        while issued < count:
            issued += 1
            began = clock()
            await call(index)
            latencies.append(clock() - began)

    before = {name: cpu_of(pid) for name, pid in watch.items()}
    client_before = cpu_self()
    began = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for index in range(concurrency):
            nursery.start_soon(worker, index)
    elapsed = time.perf_counter() - began
    client_cpu = cpu_self() - client_before
    ordered = sorted(latencies)
    result: dict[str, Any] = {
        "requests": len(ordered),
        "seconds": elapsed,
        "rate": len(ordered) / elapsed,
        "p50_ms": statistics.median(ordered) / 1e6,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] / 1e6,
        "client_cpu_us": client_cpu / len(ordered) * 1e6,
    }
    for name, pid in watch.items():
        after = cpu_of(pid)
        start = before[name]
        result[f"{name}_cpu_us"] = (
            None if start is None or after is None else (after - start) / len(ordered) * 1e6
        )
    return result


# --- over HTTP ------------------------------------------------------------------------------


class HttpCaller:
    """``C`` connections with a session each; ``call(i)`` sends one echo on connection i."""

    def __init__(self, port: int, tool: str) -> None:
        self.port = port
        self.template = body_template(tool)
        self.length = len(self.template % (FIRST_ID, 0))
        self.conns: list[tuple[Connection, bytes]] = []
        self.n = 0

    async def open(self, count: int) -> None:
        while len(self.conns) < count:
            conn = await Connection.open(self.port)
            session = await initialize(conn)
            head = request_head(conn.host, b"POST", self.length, session)
            self.conns.append((conn, head))

    async def call(self, index: int) -> None:
        conn, head = self.conns[index]
        n = self.n = self.n + 1
        body = self.template % (FIRST_ID + n % 10_000_000, n % 100_000_000)
        with trio.fail_after(CALL_TIMEOUT):
            await conn.stream.send_all(head + body)
            response = await conn.receive()
        if response.status != 200 or (b'"c-%08d"' % (n % 100_000_000)) not in response.body:
            raise LoadError(f"bad answer (HTTP {response.status}): {response.body[:300]!r}")

    async def aclose(self) -> None:
        for conn, _ in self.conns:
            await conn.aclose()


async def http_tools(port: int) -> list[str]:
    conn = await Connection.open(port)
    try:
        session = await initialize(conn)
        body = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
        response = await conn.exchange(request_head(conn.host, b"POST", len(body), session), body)
        [message] = [m for m in messages_of(response) if m.get("id") == 2]
        return [tool["name"] for tool in message["result"]["tools"]]
    finally:
        await conn.aclose()


async def run_http(job: dict[str, Any], watch: dict[str, int]) -> dict[str, Any]:
    port = int(job["url"].rsplit(":", 1)[1].split("/", 1)[0])
    name = None
    for _ in range(int(LIST_WAIT / 0.1)):  # a proxy's upstream may still be starting
        name = pick_tool(await http_tools(port))
        if name is not None:
            break
        await trio.sleep(0.1)
    if name is None:
        raise LoadError(f"no echo tool listed after {LIST_WAIT:g} s")
    caller = HttpCaller(port, name)
    out: dict[str, Any] = {"tool": name, "concurrency": {}}
    try:
        for conc in job["concurrency"]:
            await caller.open(conc)
            if job["warmup"]:
                await measure(caller.call, conc, job["warmup"], {})
            if "proxy" in watch and "upstream" not in watch:
                upstream = find_upstream(watch["proxy"], job["upstream_marker"])
                if upstream is not None:
                    watch = {**watch, "upstream": upstream}
            out["concurrency"][str(conc)] = await measure(caller.call, conc, job["requests"], watch)
    finally:
        await caller.aclose()
    return out


# --- over stdio -----------------------------------------------------------------------------


class StdioCaller:
    """Many calls in flight on one upstream's pipes."""

    def __init__(self, process: trio.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.lock = trio.StrictFIFOLock()  # one writer at a time on the pipe
        self.waiting: dict[int, list[Any]] = {}  # id -> [event, line]
        self.template = b""
        self.n = 0

    async def read_forever(self) -> None:
        buffer = b""
        while True:
            data = await self.stdout.receive_some(1 << 16)
            if not data:
                raise LoadError("the upstream closed its stdout")
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                at = line.find(b'"id":')
                if at < 0:
                    continue  # a notification
                end = at + 5
                while end < len(line) and line[end : end + 1].isdigit():
                    end += 1
                slot = self.waiting.pop(int(line[at + 5 : end] or b"-1"), None)
                if slot is not None:
                    slot[1] = line
                    slot[0].set()

    async def request(self, request_id: int, data: bytes) -> bytes:
        slot: list[Any] = [trio.Event(), b""]
        self.waiting[request_id] = slot
        async with self.lock:
            await self.stdin.send_all(data + b"\n")
        with trio.fail_after(CALL_TIMEOUT):
            await slot[0].wait()
        line: bytes = slot[1]
        return line

    async def handshake(self) -> list[str]:
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "trimcp-bench-raw", "version": "1.0"},
        }
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        answer = orjson.loads(await self.request(1, orjson.dumps(init)))
        if "result" not in answer:
            raise LoadError(f"initialize failed: {answer!r}")
        await self.stdin.send_all(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        listed = orjson.loads(
            await self.request(2, b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
        )
        return [tool["name"] for tool in listed["result"]["tools"]]

    async def call(self, index: int) -> None:
        del index  # every call shares the pipe
        n = self.n = self.n + 1
        request_id = FIRST_ID + n % 10_000_000
        line = await self.request(request_id, self.template % (request_id, n % 100_000_000))
        if (b'"c-%08d"' % (n % 100_000_000)) not in line or b'"result"' not in line:
            raise LoadError(f"bad answer: {line[:300]!r}")


async def run_stdio(job: dict[str, Any], watch: dict[str, int]) -> dict[str, Any]:
    process = await trio.lowlevel.open_process(
        [sys.executable, job["server"]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    caller = StdioCaller(process)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(caller.read_forever)
            name = pick_tool(await caller.handshake())
            if name is None:
                raise LoadError("the upstream lists no echo tool")
            caller.template = body_template(name)
            watch = {**watch, "upstream": process.pid}
            out: dict[str, Any] = {"tool": name, "concurrency": {}}
            for conc in job["concurrency"]:
                if job["warmup"]:
                    await measure(caller.call, conc, job["warmup"], {})
                out["concurrency"][str(conc)] = await measure(
                    caller.call, conc, job["requests"], watch
                )
            nursery.cancel_scope.cancel()
        return out
    finally:
        with trio.CancelScope(shield=True):
            await process.stdin.aclose() if process.stdin else None
            with trio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


async def run(job: dict[str, Any]) -> dict[str, Any]:
    watch = {name: int(pid) for name, pid in job.get("watch", {}).items()}
    with trio.fail_after(job["time_limit"]):
        if job["mode"] == "stdio":
            return await run_stdio(job, watch)
        return await run_http(job, watch)


def main() -> None:
    job_main(run, hard_exit=True)


if __name__ == "__main__":
    main()
