"""The load generator of ``bench/modern.py``: ``tools/call`` echo over Streamable HTTP, both eras.

Usage (``bench/modern.py`` runs it)::

    python -P bench/_modern_load.py '{"era": "modern", "port": 8000, "concurrency": [1, 16], ...}'

One job, against 127.0.0.1, answered with one JSON line on stdout (``{"error": ...}`` when
the server misbehaved). The client is ``_gateway_raw.py``'s: ``C`` keep-alive HTTP/1.1
connections, each sending one request at a time, back to back; request heads built and
validated by h11 once and reused as bytes; bodies ``%``-formatted from one template whose
numbers have a fixed width (so ``Content-Length`` never changes); responses read by
``_http_load.py``'s small parser and checked with byte searches. Per request it costs a few
tens of µs of CPU, far below any MCP server here.

``era``:

* ``"modern"`` (MCP 2026-07-28): every request is a self-contained POST, no ``initialize``
  and no session: ``MCP-Protocol-Version: 2026-07-28``, ``Mcp-Method: tools/call``,
  ``Mcp-Name: echo``, and in the body ``params._meta`` with
  ``io.modelcontextprotocol/protocolVersion``, ``.../clientCapabilities`` (``{}``) and
  ``.../clientInfo``. Before the timed part (parsed as JSON, not timed): a
  ``server/discover`` probe, which must list 2026-07-28, and a ``tools/call``; neither
  answer may carry an ``Mcp-Session-Id`` (the server really is stateless on this path).
* ``"legacy"`` (MCP 2025-11-25): per connection one session (``initialize``,
  ``notifications/initialized``, not timed), then ``tools/call`` with ``Mcp-Session-Id`` and
  ``MCP-Protocol-Version: 2025-11-25``.

Every timed answer must be HTTP 200, ``application/json`` (no SSE), carry the request's own
id, ``"isError":false`` and the echoed text (which differs per request). The job also
reports the SHA-256 of the exact bytes of its first timed request (head + body), so the
bench can show that two rows were sent the same bytes.

Job keys: ``era``, ``port``, ``concurrency`` (list of C), ``requests`` (timed calls per C),
``warmup`` (untimed calls before each C), ``seconds`` (optional: stop a C's timed part after
this long even if ``requests`` are not done), ``watch`` (``{"server": pid}``: that process's
CPU from ``/proc`` over each timed part), ``time_limit``, ``announce`` (print ``{"warm":
true}`` once the last C's warm-up is done, for a profiler to attach).
"""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import h11
import orjson
import trio

sys.path.append(str(Path(__file__).resolve().parent))
from _client_load import cpu_of, cpu_self, job_main
from _http_load import PATH, Connection, LoadError, initialize, messages_of, request_head

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

MODERN_VERSION = "2026-07-28"
TOOL = "echo"
FIRST_ID = 10_000_000  # 8-digit ids and texts: every request body has the same length
CALL_TIMEOUT = 30.0
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "trimcp-bench-modern", "version": "1.0"},
}
_META_JSON = orjson.dumps(META)

# ``%d``: the id; ``%08d``: the text's number.
LEGACY_BODY = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
    b'"arguments":{"text":"c-%08d"}}}'
)
MODERN_BODY = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
    b'"arguments":{"text":"c-%08d"},"_meta":' + _META_JSON.replace(b"%", b"%%") + b"}}"
)
JSON_TYPE = b"\r\ncontent-type: application/json"


def modern_head(host: bytes, body_length: int, method: bytes, name: bytes | None) -> bytes:
    """A 2026-07-28 POST's head (no session), built and validated by h11."""
    headers = [
        (b"host", host),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-length", b"%d" % body_length),
        (b"mcp-protocol-version", MODERN_VERSION.encode()),
        (b"mcp-method", method),
    ]
    if name is not None:
        headers.append((b"mcp-name", name))
    request = h11.Request(method=b"POST", target=PATH, headers=headers)
    head = h11.Connection(h11.CLIENT).send(request)
    assert head is not None
    return head


async def modern_probe(
    conn: Connection, request_id: int, method: str, params: dict[str, Any]
) -> Any:  # noqa: ANN401 - a JSON value
    """One untimed 2026-07-28 request; its result (parsed). No session header allowed back."""
    body = orjson.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": META}}
    )
    name = params.get("name")
    head = modern_head(
        conn.host, len(body), method.encode(), name.encode() if isinstance(name, str) else None
    )
    response = await conn.exchange(head, body)
    if response.header(b"mcp-session-id") is not None:
        raise LoadError(f"{method} (2026-07-28) answered with an Mcp-Session-Id: not stateless")
    if response.status != 200:
        raise LoadError(f"{method} (2026-07-28): HTTP {response.status}: {response.body[:300]!r}")
    for message in messages_of(response):
        if message.get("id") == request_id and "result" in message:
            return message["result"]
    raise LoadError(f"{method} (2026-07-28): no result: {response.body[:300]!r}")


class Caller:
    """``C`` connections; ``call(i)`` sends one echo on connection i and checks the answer."""

    def __init__(self, era: str, port: int) -> None:
        self.era = era
        self.port = port
        self.template = MODERN_BODY if era == "modern" else LEGACY_BODY
        self.length = len(self.template % (FIRST_ID, 0))
        self.conns: list[tuple[Connection, bytes]] = []
        self.n = 0
        self.first_request: bytes | None = None
        self.probe: dict[str, Any] = {}

    async def open(self, count: int) -> None:
        while len(self.conns) < count:
            conn = await Connection.open(self.port)
            if self.era == "modern":
                if not self.probe:
                    self.probe = await self._discover(conn)
                head = modern_head(conn.host, self.length, b"tools/call", TOOL.encode())
            else:
                session = await initialize(conn)
                head = request_head(conn.host, b"POST", self.length, session)
            self.conns.append((conn, head))

    async def _discover(self, conn: Connection) -> dict[str, Any]:
        found = await modern_probe(conn, 1, "server/discover", {})
        versions = found.get("supportedVersions") or []
        if MODERN_VERSION not in versions:
            raise LoadError(f"server/discover does not offer {MODERN_VERSION}: {found!r}")
        listed = await modern_probe(conn, 2, "tools/list", {})
        if TOOL not in [tool["name"] for tool in listed.get("tools", [])]:
            raise LoadError(f"tools/list (2026-07-28) has no {TOOL!r}: {listed!r}")
        called = await modern_probe(
            conn, 3, "tools/call", {"name": TOOL, "arguments": {"text": "probe"}}
        )
        if called.get("content") != [{"type": "text", "text": "probe"}] or called.get("isError"):
            raise LoadError(f"tools/call (2026-07-28) answered {called!r}")
        info = (found.get("_meta") or {}).get("io.modelcontextprotocol/serverInfo") or {}
        return {
            "supportedVersions": versions,
            "serverInfo": info,
            "stateless": True,  # no Mcp-Session-Id on any of the three answers
        }

    async def call(self, index: int) -> None:
        conn, head = self.conns[index]
        n = self.n = self.n + 1
        request_id = FIRST_ID + n % 10_000_000
        text = n % 100_000_000
        data = head + self.template % (request_id, text)
        if self.first_request is None:
            self.first_request = data
        with trio.fail_after(CALL_TIMEOUT):
            await conn.stream.send_all(data)
            response = await conn.receive()
        body = response.body
        if (
            response.status != 200
            or JSON_TYPE not in response.head.lower()
            or (b'"id":%d,' % request_id) not in body
            or (b'"text":"c-%08d"' % text) not in body
            or b'"isError":false' not in body
        ):
            raise LoadError(
                f"bad answer (HTTP {response.status}): {response.head[:200]!r} {body[:300]!r}"
            )

    async def aclose(self) -> None:
        for conn, _ in self.conns:
            await conn.aclose()


async def measure(
    call: Callable[[int], Awaitable[None]],
    concurrency: int,
    count: int,
    seconds: float | None,
    watch: dict[str, int],
) -> dict[str, Any]:
    """``count`` calls (or fewer if ``seconds`` pass first) by ``concurrency`` workers."""
    latencies: list[int] = []
    issued = 0
    clock = time.perf_counter_ns
    deadline = None if seconds is None else clock() + int(seconds * 1e9)

    async def worker(index: int) -> None:
        nonlocal issued
        while issued < count and (deadline is None or clock() < deadline):
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
        after, start = cpu_of(pid), before[name]
        result[f"{name}_cpu_us"] = (
            None if start is None or after is None else (after - start) / len(ordered) * 1e6
        )
    return result


async def run(job: dict[str, Any]) -> dict[str, Any]:
    watch = {name: int(pid) for name, pid in job.get("watch", {}).items()}
    caller = Caller(job["era"], int(job["port"]))
    out: dict[str, Any] = {"concurrency": {}}
    try:
        with trio.fail_after(job["time_limit"]):
            levels = list(job["concurrency"])
            for position, conc in enumerate(levels):
                await caller.open(conc)
                if job["warmup"]:
                    await measure(caller.call, conc, job["warmup"], None, {})
                if job.get("announce") and position == len(levels) - 1:
                    print(json.dumps({"warm": True}), flush=True)
                out["concurrency"][str(conc)] = await measure(
                    caller.call, conc, job["requests"], job.get("seconds"), watch
                )
    finally:
        with trio.CancelScope(shield=True):
            await caller.aclose()
    first = caller.first_request or b""
    out["request_sha256"] = hashlib.sha256(first).hexdigest()
    out["request_bytes"] = len(first)
    out["probe"] = caller.probe
    return out


def main() -> None:
    job_main(run, hard_exit=True)


if __name__ == "__main__":
    main()
