"""Shared pieces of the HTTP client stream tests: a server with streaming tools, raw messages.

No tests here; the other ``test_http*`` modules import it.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import orjson
import trio

from tests.http._client import build_server
from trimcp.server import Context, MCPServer  # noqa: TC001 - tool hints are read at runtime

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.transports import MessageStream

_ids = itertools.count(1)


def streaming_server() -> MCPServer:
    """``echo`` and ``slow`` plus tools that stream: progress, and a polled long call."""
    server = build_server()

    @server.tool()
    async def progress(steps: int, ctx: Context) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps)
        return f"{steps} steps"

    @server.tool()
    async def poll(ctx: Context) -> str:
        """Close this call's SSE connection, then answer (SEP-1699 polling)."""
        await ctx.report_progress(1, 2)
        closed = ctx.close_sse_stream()
        await trio.sleep(0.1)
        await ctx.report_progress(2, 2)
        return f"polled (closed: {closed})"

    @server.tool()
    async def shout(ctx: Context) -> str:
        """Log a message to every session (server-wide: goes out on GET streams)."""
        await ctx.info("hello from the tool")
        return "shouted"

    return server


def request(method: str, params: dict[str, Any] | None = None) -> tuple[int, bytes]:
    """Return a new request id and the request's bytes."""
    request_id = next(_ids)
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return request_id, orjson.dumps(message)


def notification(method: str) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "method": method})


def initialize_request(version: str = "2025-11-25") -> tuple[int, bytes]:
    return request(
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "http-stream-test", "version": "1"},
        },
    )


async def answer_to(stream: MessageStream, request_id: int, seen: list[Any] | None = None) -> Any:
    """Receive until the response to ``request_id``; keep the rest in ``seen``."""
    while True:
        message = orjson.loads(await stream.receive_message())
        if message.get("id") == request_id and "method" not in message:
            return message
        if seen is not None:
            seen.append(message)


async def initialize(stream: MessageStream, version: str = "2025-11-25") -> Any:
    """Run the handshake over ``stream``; return the initialize result."""
    request_id, data = initialize_request(version)
    await stream.send_message(data)
    answer = await answer_to(stream, request_id)
    await stream.send_message(notification("notifications/initialized"))
    return answer["result"]


async def call_tool(
    stream: MessageStream,
    name: str,
    arguments: dict[str, Any],
    *,
    progress: bool = False,
    seen: list[Any] | None = None,
) -> Any:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    request_id, data = request("tools/call", params)
    if progress:
        params["_meta"] = {"progressToken": request_id}
        data = orjson.dumps(
            {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        )
    await stream.send_message(data)
    return await answer_to(stream, request_id, seen)


# --- a raw HTTP/1.1 server on 127.0.0.1, answering from a script --------------------------

RawHandler = Callable[[str, dict[str, str], bytes], Awaitable[bytes]]


async def read_request(stream: trio.SocketStream) -> tuple[str, dict[str, str], bytes] | None:
    """Read one HTTP/1.1 request: method, lower-case headers, body (None if the peer left)."""
    buffer = bytearray()
    while b"\r\n\r\n" not in buffer:
        chunk = await stream.receive_some(65536)
        if not chunk:
            return None
        buffer += chunk
    head, _, body = bytes(buffer).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method = lines[0].split(" ", 1)[0]
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = await stream.receive_some(65536)
        if not chunk:
            return None
        body += chunk
    return method, headers, body


@contextlib.asynccontextmanager
async def raw_server(handler: RawHandler) -> AsyncIterator[str]:
    """Serve ``handler``'s raw answers (one per connection, then close); yield the URL."""

    async def serve_one(stream: trio.SocketStream) -> None:
        async with stream:
            request = await read_request(stream)
            if request is None:
                return
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await stream.send_all(await handler(*request))

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            functools.partial(trio.serve_tcp, serve_one, 0, host="127.0.0.1")
        )
        port = listeners[0].socket.getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            nursery.cancel_scope.cancel()


def raw_answer(status: str, content_type: str | None, body: bytes) -> bytes:
    """Return a whole HTTP/1.1 answer ending the connection (no Content-Length for SSE)."""
    head = [f"HTTP/1.1 {status}", "connection: close"]
    if content_type is not None:
        head.append(f"content-type: {content_type}")
    if content_type != "text/event-stream":
        head.append(f"content-length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def init_result(request_id: int, version: str = "2025-11-25") -> bytes:
    result = {
        "protocolVersion": version,
        "capabilities": {},
        "serverInfo": {"name": "raw", "version": "1"},
    }
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": result})
