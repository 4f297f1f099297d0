"""The load generator of ``bench/http.py``: a separate process, trio + raw sockets + h11.

Usage (``bench/http.py`` runs it; by hand for a look)::

    python bench/_http_load.py '{"kind": "throughput", "port": 8000, "mode": "mcp", ...}'

It runs one *job* against 127.0.0.1 and prints one JSON object on stdout (``{"error": ...}``
when the server misbehaved). Jobs:

* ``throughput`` ``{port, mode: "mcp" | "plain", connections, warmup, duration, pid?,
  profile?}``: every connection is one keep-alive TCP connection with, in ``mcp`` mode, its
  own initialized session (``initialize``, ``notifications/initialized``), then sends
  ``tools/call`` ``echo`` requests back to back, one at a time (``plain``: the same POST
  body, no session). After ``warmup`` seconds it counts, for ``duration`` seconds, the
  requests whose response completes in the window, and their latencies (send -> end of
  the response body). It also reports its own CPU time and, given the server's ``pid``,
  the server's (``/proc/<pid>/stat``), both per request. ``profile``: a path; the server
  is asked (tool ``bench_profile``) to run cProfile during the window and dump it there.
* ``memory`` ``{port, sessions, connections, snapshot?}``: a probe session; warm-up
  sessions created and deleted; then a probe (tool ``bench_memory``), ``sessions`` sessions
  created (``initialize`` + ``initialized``, then idle), a pause, a probe, every one of them
  deleted (``DELETE``), a pause, a probe. ``snapshot``: a path prefix; each probe asks the
  server to dump a tracemalloc snapshot to ``<prefix>.before|loaded|after``.
* ``progress`` ``{port, count, profile?}``: one ``tools/call`` of ``progress_flood`` with a
  progress token on an SSE response; timestamps the first and the last progress event as
  they arrive. ``profile``: as for ``throughput``, around the call.

The per-request path is kept short so the generator is never the bottleneck: a session's
request head is serialized (and validated) by h11 once and reused as bytes; request bodies
are ``%``-formatted from one template whose numbers have a fixed width, so
``Content-Length`` never changes; responses are parsed by hand, just enough (status line,
headers up to the empty line, then the sized or chunked body to its last chunk; h11's own
parser costs ~160 µs per response on these machines, more than the servers' margins) and
checked with byte searches only: status 200, ``"result"`` present, the echoed text present
(it differs per request). JSON is parsed only outside the timed loop. The generator's CPU
per request is reported next to every figure; ``bench/http.py`` compares it with the raw
trio + h11 floor to show its ceiling.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import h11
import orjson
import trio

PROTOCOL_VERSION = "2025-11-25"
PATH = "/mcp"
READ_SIZE = 1 << 16
IO_TIMEOUT = 30.0  # seconds without progress on one exchange before the job fails
FIRST_ID = 10_000_000  # ids and texts have 8 digits, so every body has the same length
ECHO_BODY = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
    b'"params":{"name":"echo","arguments":{"text":"echo-%08d"}}}'
)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class LoadError(Exception):
    """The server answered wrongly, closed the connection or stalled."""


# --- one connection ------------------------------------------------------------------------


@dataclass
class Response:
    status: int
    head: bytes  # the status line and headers, as received
    body: bytes  # de-chunked

    def header(self, name: bytes) -> bytes | None:
        """Return a header's value (``name`` in lower case), or None."""
        key = b"\r\n" + name + b":"
        at = self.head.lower().find(key)
        if at < 0:
            return None
        start = at + len(key)
        end = self.head.find(b"\r\n", start)
        return self.head[start : end if end >= 0 else len(self.head)].strip()


def request_head(
    host: bytes, method: bytes, body_length: int, session_id: bytes | None = None
) -> bytes:
    """Return a request's head, built and validated by h11 (once per session and shape)."""
    headers = [
        (b"host", host),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-length", b"%d" % body_length),
    ]
    if session_id is not None:
        headers += [
            (b"mcp-session-id", session_id),
            (b"mcp-protocol-version", PROTOCOL_VERSION.encode()),
        ]
    head = h11.Connection(h11.CLIENT).send(h11.Request(method=method, target=PATH, headers=headers))
    assert head is not None
    return head


class Connection:
    """One keep-alive HTTP/1.1 connection: pre-built requests out, responses parsed by hand.

    The parser reads just what this bench needs: the status line, the headers up to the
    empty line, then a ``Content-Length`` body or a chunked body up to its last (empty)
    chunk; no trailers, no ``100 Continue``, no pipelining. Anything else fails the job.
    """

    def __init__(self, stream: trio.SocketStream, host: bytes) -> None:
        self.stream = stream
        self.host = host
        self.buffer = b""

    @classmethod
    async def open(cls, port: int) -> Connection:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        return cls(stream, b"127.0.0.1:%d" % port)

    def head(self, method: bytes, body_length: int, session_id: bytes | None = None) -> bytes:
        return request_head(self.host, method, body_length, session_id)

    async def _more(self) -> bytes:
        data = await self.stream.receive_some(READ_SIZE)
        if not data:
            raise LoadError("the server closed the connection mid-response")
        return data

    async def receive(self, on_chunk: Any = None) -> Response:  # noqa: ANN401 - optional callback
        """Read one whole response; ``on_chunk(data)`` sees each body chunk as it arrives."""
        buf = self.buffer
        while (end := buf.find(b"\r\n\r\n")) < 0:
            buf += await self._more()
        head = buf[:end]
        status = int(head[9:12])
        pos = end + 4
        lower = head.lower()
        if b"\r\ntransfer-encoding: chunked" not in lower:
            length = int(Response(status, lower, b"").header(b"content-length") or 0)
            while len(buf) < pos + length:
                buf += await self._more()
            self.buffer = buf[pos + length :]
            return Response(status, head, buf[pos : pos + length])
        parts: list[bytes] = []
        while True:
            while (eol := buf.find(b"\r\n", pos)) < 0:
                buf = buf[pos:] + await self._more()
                pos = 0
            size = int(buf[pos:eol].split(b";", 1)[0], 16)
            start = eol + 2
            while len(buf) < start + size + 2:
                buf = buf[pos:] + await self._more()
                start -= pos
                pos = 0
            if size == 0:
                self.buffer = buf[start + 2 :]
                return Response(status, head, b"".join(parts))
            chunk = buf[start : start + size]
            parts.append(chunk)
            if on_chunk is not None:
                on_chunk(chunk)
            pos = start + size + 2

    async def exchange(self, head: bytes, body: bytes) -> Response:
        with trio.fail_after(IO_TIMEOUT):
            await self.stream.send_all(head + body)
            return await self.receive()

    async def aclose(self) -> None:
        await self.stream.aclose()


# --- MCP on top of it -------------------------------------------------------------------------


def messages_of(response: Response) -> list[dict[str, Any]]:
    """Return the JSON-RPC messages of a JSON or SSE response body."""
    if (response.header(b"content-type") or b"").startswith(b"text/event-stream"):
        lines = response.body.split(b"\n")
        return [orjson.loads(ln[5:]) for ln in lines if ln.startswith(b"data:") and ln[5:].strip()]
    if not response.body:
        return []
    decoded = orjson.loads(response.body)
    return decoded if isinstance(decoded, list) else [decoded]


def result_of(response: Response, request_id: int) -> dict[str, Any]:
    if response.status != 200:
        raise LoadError(f"HTTP {response.status}: {response.body[:300]!r}")
    for message in messages_of(response):
        if message.get("id") == request_id:
            result = message.get("result")
            if not isinstance(result, dict):
                raise LoadError(f"request {request_id} failed: {message!r}")
            return result
    raise LoadError(f"no response to request {request_id}: {response.body[:300]!r}")


async def post(
    conn: Connection, message: dict[str, Any], session_id: bytes | None = None
) -> Response:
    body = orjson.dumps(message)
    return await conn.exchange(conn.head(b"POST", len(body), session_id), body)


async def initialize(conn: Connection) -> bytes:
    """Open an initialized session; return its id."""
    params = {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "trimcp-bench", "version": "1.0"},
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    response = await post(conn, message)
    result = result_of(response, 1)
    if result.get("protocolVersion") != PROTOCOL_VERSION:
        raise LoadError(f"initialize negotiated {result.get('protocolVersion')!r}")
    session_id = response.header(b"mcp-session-id")
    if not session_id:
        raise LoadError("initialize answered without an MCP-Session-Id")
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    response = await post(conn, note, session_id)
    if response.status != 202:
        raise LoadError(f"notifications/initialized got HTTP {response.status}")
    return session_id


async def call_tool(
    conn: Connection, session_id: bytes, request_id: int, name: str, arguments: dict[str, Any]
) -> str:
    """Call a tool outside the timed loop; return its first text block."""
    params = {"name": name, "arguments": arguments}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    result = result_of(await post(conn, message, session_id), request_id)
    if result.get("isError"):
        raise LoadError(f"tool {name} failed: {result!r}")
    return str(result["content"][0]["text"])


async def call_once(
    port: int, session_id: bytes, request_id: int, name: str, arguments: dict[str, Any]
) -> str:
    """``call_tool`` on a fresh connection (servers close keep-alive connections idle 5 s)."""
    conn = await Connection.open(port)
    try:
        return await call_tool(conn, session_id, request_id, name, arguments)
    finally:
        await conn.aclose()


async def delete(conn: Connection, session_id: bytes) -> None:
    response = await conn.exchange(conn.head(b"DELETE", 0, session_id), b"")
    if response.status not in (200, 202, 204):
        raise LoadError(f"DELETE got HTTP {response.status}: {response.body[:200]!r}")


# --- throughput ---------------------------------------------------------------------------


def cpu_seconds(pid: int | None) -> float:
    """Return a process's user + system CPU seconds (this process when pid is None)."""
    if pid is None:
        times = os.times()
        return times.user + times.system
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


@dataclass
class Window:
    """The measurement window, shared by the connections of one throughput job."""

    start: float = float("inf")
    end: float = float("inf")
    latencies: list[int] = field(default_factory=list)
    over: bool = False


async def hammer(conn: Connection, session_id: bytes | None, window: Window, first: int) -> None:
    """Send echo calls back to back until the window closes; record those inside it."""
    clock = time.perf_counter_ns
    head = conn.head(b"POST", len(ECHO_BODY % (FIRST_ID, 0)), session_id)
    send_all, receive = conn.stream.send_all, conn.receive
    latencies = window.latencies
    n = first
    while not window.over:
        body = ECHO_BODY % (FIRST_ID + n % 10_000_000, n % 100_000_000)
        expected = b'"echo-%08d"' % (n % 100_000_000)
        began = clock()
        with trio.fail_after(IO_TIMEOUT):
            await send_all(head + body)
            response = await receive()
        done = clock()
        if (
            response.status != 200
            or b'"result"' not in response.body
            or (session_id is not None and expected not in response.body)
        ):
            raise LoadError(f"bad echo response (HTTP {response.status}): {response.body[:300]!r}")
        if window.start <= done / 1e9 < window.end:
            latencies.append(done - began)
        n += 1


async def throughput(job: dict[str, Any]) -> dict[str, Any]:
    port, pid = job["port"], job.get("pid")
    mcp = job["mode"] == "mcp"
    conns = [await Connection.open(port) for _ in range(job["connections"])]
    sessions = [await initialize(c) if mcp else None for c in conns]
    profile = job.get("profile")
    control = await initialize(conns[0]) if profile else None  # a session of its own
    window = Window()
    result: dict[str, Any] = {}

    async def timer() -> None:
        await trio.sleep(job["warmup"])
        if control is not None:
            await call_once(port, control, 2, "bench_profile", {"action": "start"})
        cpu_us, cpu_server = cpu_seconds(None), cpu_seconds(pid) if pid else 0.0
        window.start = time.perf_counter_ns() / 1e9
        window.end = window.start + job["duration"]
        await trio.sleep(job["duration"])
        result["gen_cpu_s"] = cpu_seconds(None) - cpu_us
        result["server_cpu_s"] = cpu_seconds(pid) - cpu_server if pid else None
        window.over = True
        if control is not None:
            arguments = {"action": "stop", "path": profile}
            await call_once(port, control, 3, "bench_profile", arguments)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(timer)
        for i, (conn, session_id) in enumerate(zip(conns, sessions, strict=True)):
            nursery.start_soon(hammer, conn, session_id, window, i * 1_000_000)
    for conn in conns:
        await conn.aclose()
    latencies = sorted(window.latencies)
    count = len(latencies)
    if not count:
        raise LoadError("no request completed in the measurement window")
    result.update(
        requests=count,
        rate=count / job["duration"],
        p50_ms=statistics.median(latencies) / 1e6,
        p99_ms=latencies[min(count - 1, int(count * 0.99))] / 1e6,
    )
    result["gen_cpu_us"] = result["gen_cpu_s"] / count * 1e6
    if result["server_cpu_s"] is not None:
        result["server_cpu_us"] = result["server_cpu_s"] / count * 1e6
    return result


# --- memory ---------------------------------------------------------------------------------


async def probe(
    port: int, session_id: bytes, request_id: int, snapshot: str | None
) -> dict[str, Any]:
    arguments = {"snapshot": snapshot} if snapshot else {}
    text = await call_once(port, session_id, request_id, "bench_memory", arguments)
    report: dict[str, Any] = json.loads(text)
    return report


async def open_sessions(port: int, count: int, connections: int) -> list[bytes]:
    """Create ``count`` sessions over ``connections`` keep-alive connections."""
    opened: list[bytes] = []

    async def worker(share: int) -> None:
        conn = await Connection.open(port)
        try:
            for _ in range(share):
                session_id = await initialize(conn)
                opened.append(session_id)
        finally:
            await conn.aclose()

    async with trio.open_nursery() as nursery:
        for i in range(connections):
            nursery.start_soon(worker, count // connections + (i < count % connections))
    return opened


async def close_sessions(port: int, session_ids: list[bytes], connections: int) -> None:
    async def worker(share: list[bytes]) -> None:
        conn = await Connection.open(port)
        try:
            for session_id in share:
                await delete(conn, session_id)
        finally:
            await conn.aclose()

    async with trio.open_nursery() as nursery:
        for i in range(connections):
            nursery.start_soon(worker, session_ids[i::connections])


async def memory(job: dict[str, Any]) -> dict[str, Any]:
    port, count, connections = job["port"], job["sessions"], job["connections"]
    settle = job.get("settle", 1.0)
    first = await Connection.open(port)
    control = await initialize(first)  # the probes' session, in every figure
    # Warm-up: lazily built state (imports, caches, free lists) is in the baseline.
    warm = await open_sessions(port, job.get("warm", 10), 2)
    for session_id in warm:
        await call_tool(first, session_id, 2, "echo", {"text": "warm"})
    await close_sessions(port, warm, 2)
    await first.aclose()
    await trio.sleep(settle)
    snapshot = job.get("snapshot")  # a path prefix: the server dumps tracemalloc snapshots
    before = await probe(port, control, 100, snapshot and f"{snapshot}.before")
    began = time.perf_counter()
    opened = await open_sessions(port, count, connections)
    create_s = time.perf_counter() - began
    await trio.sleep(settle)
    loaded = await probe(port, control, 101, snapshot and f"{snapshot}.loaded")
    began = time.perf_counter()
    await close_sessions(port, opened, connections)
    delete_s = time.perf_counter() - began
    await trio.sleep(settle)
    after = await probe(port, control, 102, snapshot and f"{snapshot}.after")
    return {
        "sessions": count,
        "before": before,
        "loaded": loaded,
        "after": after,
        "create_s": create_s,
        "delete_s": delete_s,
    }


# --- progress -----------------------------------------------------------------------------


async def progress(job: dict[str, Any]) -> dict[str, Any]:
    count, port, profile = job["count"], job["port"], job.get("profile")
    conn = await Connection.open(port)
    session_id = await initialize(conn)
    if profile:
        await call_once(port, session_id, 3, "bench_profile", {"action": "start"})
    clock = time.perf_counter
    pattern = b'"notifications/progress"'
    seen = {"events": 0, "first": 0.0, "last": 0.0}
    tail = [b""]

    def on_chunk(chunk: bytes) -> None:
        # Count the pattern across chunk boundaries: keep a tail too short to hold a match.
        data = tail[0] + chunk
        tail[0] = data[1 - len(pattern) :]
        found = data.count(pattern)
        if found:
            now = clock()
            if not seen["events"]:
                seen["first"] = now
            seen["events"] += found
            seen["last"] = now

    params = {
        "name": "progress_flood",
        "arguments": {"count": count},
        "_meta": {"progressToken": "flood"},
    }
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
    body = orjson.dumps(message)
    began = clock()
    with trio.fail_after(IO_TIMEOUT * 4):
        await conn.stream.send_all(conn.head(b"POST", len(body), session_id) + body)
        response = await conn.receive(on_chunk)
    ended = clock()
    await conn.aclose()
    if profile:
        await call_once(port, session_id, 4, "bench_profile", {"action": "stop", "path": profile})
    result = result_of(response, 2)
    if result.get("isError") or seen["events"] != count:
        raise LoadError(f"expected {count} progress events, got {seen['events']}: {result!r}")
    last = [m for m in messages_of(response) if m.get("method") == "notifications/progress"][-1]
    if last["params"]["progress"] != count:
        raise LoadError(f"the last progress event is {last!r}")
    span = seen["last"] - seen["first"]
    return {
        "events": seen["events"],
        "span_s": span,
        "rate": (count - 1) / span if span > 0 else float("inf"),
        "total_s": ended - began,
        "content_type": (response.header(b"content-type") or b"").decode(),
    }


JOBS = {"throughput": throughput, "memory": memory, "progress": progress}


def main() -> None:
    job = json.loads(sys.argv[1])
    try:
        result = trio.run(JOBS[job["kind"]], job)
    except* (LoadError, trio.TooSlowError, OSError, h11.ProtocolError) as group:
        result = {"error": "; ".join(f"{type(e).__name__}: {e}" for e in group.exceptions)}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
