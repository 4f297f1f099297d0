"""A raw Streamable HTTP client for tests: httpx, headers by hand, SSE parsed by trimcp."""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
import trio

from trimcp.http import HttpListener, HttpOptions
from trimcp.server import MCPServer
from trimcp.transports import SSEDecoder, SSEEvent

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import httpx

    from trimcp.sessions import SessionLimits

ACCEPT_BOTH = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw-test-client", "version": "1"},
    },
}


def build_server() -> MCPServer:
    server = MCPServer("http-test")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool()
    async def slow(seconds: float) -> str:
        await trio.sleep(seconds)
        return "done"

    return server


@contextlib.asynccontextmanager
async def running(
    server: MCPServer | None = None,
    options: HttpOptions | None = None,
    limits: SessionLimits | None = None,
    engine: str = "trimcp",
) -> AsyncIterator[HttpListener]:
    """Serve ``server`` on 127.0.0.1 and a free port for the block, on ``engine``."""
    server = server or build_server()
    settings: dict[str, Any] = {"options": options or HttpOptions(), "engine": engine}
    if limits is not None:
        settings["limits"] = limits
    async with trio.open_nursery() as nursery:
        listener: HttpListener = await nursery.start(
            functools.partial(server.serve_http, **settings)
        )
        try:
            yield listener
        finally:
            nursery.cancel_scope.cancel()


@dataclass
class Answer:
    """One HTTP answer: status, headers, and the JSON-RPC messages in its body."""

    status: int
    headers: httpx.Headers
    messages: list[Any] = field(default_factory=list)
    events: list[SSEEvent] = field(default_factory=list)

    @property
    def message(self) -> Any:
        (only,) = [m for m in self.messages if "method" not in m]
        return only


async def post(
    client: httpx.AsyncClient,
    url: str,
    body: object,
    *,
    session: str | None = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    """POST ``body`` and read the whole answer (JSON or SSE until the stream ends)."""
    sent = {"accept": ACCEPT_BOTH, "content-type": "application/json"}
    if session is not None:
        sent["mcp-session-id"] = session
        sent["mcp-protocol-version"] = "2025-11-25"
    sent.update(headers or {})
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    async with client.stream("POST", url, content=content, headers=sent) as response:
        return await read_answer(response)


async def read_answer(response: httpx.Response) -> Answer:
    answer = Answer(response.status_code, response.headers)
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        decoder = SSEDecoder()
        async for chunk in response.aiter_bytes():
            answer.events.extend(decoder.feed(chunk))
        answer.messages = [orjson.loads(e.data) for e in answer.events if e.data.strip()]
    else:
        raw = await response.aread()
        if raw:
            parsed = orjson.loads(raw)
            answer.messages = parsed if isinstance(parsed, list) else [parsed]
    return answer


async def handshake(client: httpx.AsyncClient, url: str) -> str:
    """Initialize a session and send ``notifications/initialized``; return the session id."""
    answer = await post(client, url, INITIALIZE)
    assert answer.status == 200, answer.messages
    session = answer.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    initialized = await post(client, url, note, session=session)
    assert initialized.status == 202
    return session
