"""A tool's log messages travel on its request's SSE stream, before its answer.

Over Streamable HTTP a server may send messages on a POST's stream before the response, and
they "SHOULD relate to the originating client request" (MCP 2025-11-25, Transports): a
tool's ``ctx.log`` is such a message. On that stream they arrive in order with the result,
and a client that never opened the GET stream still gets them.
"""

from __future__ import annotations

import httpx
import orjson
import pytest
import trio

from trimcp.http import HttpOptions
from trimcp.server import Context, MCPServer
from trimcp.transports import SSEDecoder, SSEEvent

from ._client import handshake, post, running

pytestmark = pytest.mark.slow


def _server() -> MCPServer:
    server = MCPServer("logs")

    @server.tool()
    async def chatty(count: int, ctx: Context) -> str:
        """Log ``count`` lines, then answer."""
        for index in range(count):
            await ctx.info(f"line {index}")
        return "done"

    return server


async def _get_stream(
    client: httpx.AsyncClient,
    url: str,
    session: str,
    seen: list[SSEEvent],
    enough: tuple[int, trio.Event] | None = None,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    headers = {
        "accept": "text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
    }
    async with client.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        task_status.started()
        decoder = SSEDecoder()
        async for chunk in response.aiter_bytes():
            seen.extend(event for event in decoder.feed(chunk) if event.data.strip())
            if enough is not None and len(seen) >= enough[0]:
                enough[1].set()


async def test_log_lines_come_on_the_post_stream_before_the_result() -> None:
    async with (
        running(_server()) as listener,
        httpx.AsyncClient() as client,
        trio.open_nursery() as nursery,
    ):
        session = await handshake(client, listener.url)
        # The GET stream is open: a message unrelated to any request would go there.
        on_get: list[SSEEvent] = []
        await nursery.start(_get_stream, client, listener.url, session, on_get)
        level = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "logging/setLevel",
            "params": {"level": "info"},
        }
        assert (await post(client, listener.url, level, session=session)).status == 200
        body = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "chatty", "arguments": {"count": 3}},
        }
        answer = await post(client, listener.url, body, session=session)
        assert answer.status == 200
        kinds = [m.get("method", "result") for m in answer.messages]
        assert kinds == ["notifications/message"] * 3 + ["result"]
        assert [m["params"]["data"] for m in answer.messages[:3]] == ["line 0", "line 1", "line 2"]
        assert answer.messages[-1]["result"]["content"][0]["text"] == "done"
        assert on_get == []
        nursery.cancel_scope.cancel()


async def test_with_json_answers_they_come_on_the_get_stream() -> None:
    options = HttpOptions(json_response=True)
    async with (
        running(_server(), options) as listener,
        httpx.AsyncClient() as client,
        trio.open_nursery() as nursery,
    ):
        session = await handshake(client, listener.url)
        on_get: list[SSEEvent] = []
        two = trio.Event()
        await nursery.start(_get_stream, client, listener.url, session, on_get, (2, two))
        level = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "logging/setLevel",
            "params": {"level": "info"},
        }
        assert (await post(client, listener.url, level, session=session)).status == 200
        body = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "chatty", "arguments": {"count": 2}},
        }
        answer = await post(client, listener.url, body, session=session)
        assert answer.headers["content-type"].startswith("application/json")
        assert [m.get("id") for m in answer.messages] == [2]  # the response only
        with trio.fail_after(5):
            await two.wait()
        logged = [orjson.loads(event.data)["params"]["data"] for event in on_get]
        assert logged == ["line 0", "line 1"]
        nursery.cancel_scope.cancel()
