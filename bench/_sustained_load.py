"""The load generator of ``bench/sustained_http.py``: one busy MCP session, sustained.

Usage (``bench/sustained_http.py`` runs it)::

    python bench/_sustained_load.py '{"port": 8000, "connections": 16, "duration": 60, ...}'

Job fields: ``port``; ``connections`` keep-alive connections that all carry *one* session
(one ``initialize`` on the first, its ``MCP-Session-Id`` on all), each sending ``tools/call``
``echo`` back to back; ``duration`` seconds of that; ``interval``: the seconds between two
counts of completed requests; ``stalled``: also open a second session whose client stops
reading (module ``stall``).

It prints ``READY`` on stdout once the sessions are set up (the runner starts its clock
there), then, at the end, one JSON object: ``counts`` (requests completed at each
``interval`` mark, cumulative), ``requests``, ``seconds`` (``{"error": ...}`` when the
server misbehaved). The request path reuses ``_http_load.py``'s connection and parser, so
the generator costs what it costs there (~200 µs of CPU per request).
"""

from __future__ import annotations

import json
import socket
import sys
from dataclasses import dataclass, field
from typing import Any

import h11
import orjson
import trio
from _http_load import ECHO_BODY, FIRST_ID, IO_TIMEOUT, Connection, LoadError, initialize

# Ids per connection: connection i uses FIRST_ID + i * _ID_SPAN + (n mod _ID_SPAN), so ids
# never collide between connections of the one session and keep their 8 digits (fixed
# Content-Length) for up to 18 connections.
_ID_SPAN = 5_000_000
# The stalled client's receive buffer: small, so its connections stop draining at once.
_STALLED_RCVBUF = 4096
# Progress notifications the stalled call asks for: more than any run sends.
_FLOOD = 1_000_000_000


@dataclass
class Tally:
    """Completed requests, shared by the connections of one run."""

    done: int = 0
    over: bool = False
    counts: list[int] = field(default_factory=list)


async def hammer(conn: Connection, session_id: bytes, index: int, tally: Tally) -> None:
    """Send ``echo`` calls back to back until the run is over, checking each answer."""
    head = conn.head(b"POST", len(ECHO_BODY % (FIRST_ID, 0)), session_id)
    send_all, receive = conn.stream.send_all, conn.receive
    base = FIRST_ID + index * _ID_SPAN
    n = 0
    while not tally.over:
        text = n % 100_000_000
        body = ECHO_BODY % (base + n % _ID_SPAN, text)
        with trio.fail_after(IO_TIMEOUT):
            await send_all(head + body)
            response = await receive()
        if (
            response.status != 200
            or b'"result"' not in response.body
            or b'"echo-%08d"' % text not in response.body
        ):
            raise LoadError(f"bad echo response (HTTP {response.status}): {response.body[:300]!r}")
        tally.done += 1
        n += 1


async def open_stalled_socket(port: int) -> trio.SocketStream:
    """Connect with a tiny receive buffer (set before connecting, so the window is small)."""
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _STALLED_RCVBUF)
    await sock.connect(("127.0.0.1", port))
    return trio.SocketStream(sock)


async def stall(port: int) -> list[trio.SocketStream]:
    """Open a session whose client stops reading: a GET stream and a progress flood.

    The flood (``progress_flood`` with a progress token, on an SSE answer) makes the server
    produce events for a reader that takes none after the first few kilobytes; the GET
    stream is opened and never read. Both stay open until the run ends.
    """
    conn = await Connection.open(port)
    session_id = await initialize(conn)
    await conn.aclose()
    streams = []
    get = await open_stalled_socket(port)
    await get.send_all(Connection(get, conn.host).head(b"GET", 0, session_id))
    streams.append(get)
    params = {
        "name": "progress_flood",
        "arguments": {"count": _FLOOD},
        "_meta": {"progressToken": "stalled"},
    }
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    flood = await open_stalled_socket(port)
    await flood.send_all(Connection(flood, conn.host).head(b"POST", len(body), session_id) + body)
    streams.append(flood)
    return streams


async def run(job: dict[str, Any]) -> dict[str, Any]:
    port, interval = job["port"], job["interval"]
    conns = [await Connection.open(port) for _ in range(job["connections"])]
    session_id = await initialize(conns[0])
    stalled = await stall(port) if job.get("stalled") else []
    tally = Tally()
    print("READY", flush=True)
    began = trio.current_time()

    async def clock() -> None:
        marks = round(job["duration"] / interval)
        for mark in range(1, marks + 1):
            await trio.sleep_until(began + mark * interval)
            tally.counts.append(tally.done)
        tally.over = True

    async with trio.open_nursery() as nursery:
        nursery.start_soon(clock)
        for index, conn in enumerate(conns):
            nursery.start_soon(hammer, conn, session_id, index, tally)
    seconds = trio.current_time() - began
    for stream in [*stalled, *(conn.stream for conn in conns)]:
        await stream.aclose()
    return {"counts": tally.counts, "requests": tally.done, "seconds": seconds}


def main() -> None:
    job = json.loads(sys.argv[1])
    try:
        result = trio.run(run, job)
    except* (LoadError, trio.TooSlowError, OSError, h11.ProtocolError) as group:
        result = {"error": "; ".join(f"{type(e).__name__}: {e}" for e in group.exceptions)}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
