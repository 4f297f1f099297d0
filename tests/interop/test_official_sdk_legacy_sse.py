"""The official SDK's 2024-11-05 HTTP+SSE client against trimcp's legacy transport."""

from __future__ import annotations

import functools

import anyio
import mcp_types as types
import pytest
import trio
from mcp.client.client import Client
from mcp.client.sse import sse_client

from trimcp.http import HttpListener, HttpOptions
from trimcp.server import MCPServer

pytestmark = [
    pytest.mark.slow,
    # The SDK's HTTP client leaves its own httpx2 response generators to the garbage
    # collector when it closes; trio reports them as unraisable ResourceWarnings.
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


def build() -> MCPServer:
    server = MCPServer("legacy")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


def test_legacy_sse_round_trip() -> None:
    async def main() -> None:
        async with trio.open_nursery() as nursery:
            options = HttpOptions(legacy_sse=True)
            listener: HttpListener = await nursery.start(
                functools.partial(build().serve_http, options=options)
            )
            url = listener.url.removesuffix("/mcp") + "/sse"
            async with Client(sse_client(url), read_timeout_seconds=10, mode="legacy") as client:
                with anyio.fail_after(10):
                    tools = await client.list_tools()
                    assert [tool.name for tool in tools.tools] == ["echo"]
                    result = await client.call_tool("echo", {"text": "old"})
                    (block,) = result.content
                    assert isinstance(block, types.TextContent)
                    assert block.text == "old"
            await trio.testing.wait_all_tasks_blocked()
            assert len(listener.manager.table) == 0  # the session ended with its stream
            nursery.cancel_scope.cancel()

    anyio.run(main, backend="trio")
