"""Over a real WebSocket on 127.0.0.1: both sides' spans say tcp and websocket."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
from opentelemetry.trace import SpanKind

from tests.transports._websocket_support import websocket_pair
from trimcp.client import ClientSessionOptions, open_client_session
from trimcp.server import MCPServer
from trimcp.sessions import serve_session

if TYPE_CHECKING:
    from tests.telemetry.conftest import Otel

pytestmark = pytest.mark.slow


def echo_server() -> MCPServer:
    server = MCPServer("ws-observed")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    return server


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_websocket_spans_say_tcp_and_websocket(otel: Otel, era: str) -> None:
    async with websocket_pair(1 << 20) as (client_end, server_end), trio.open_nursery() as nursery:
        nursery.start_soon(serve_session, echo_server(), server_end)
        async with open_client_session(
            client_end, options=ClientSessionOptions(protocol_version=era)
        ) as client:
            assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
        nursery.cancel_scope.cancel()
    spans = [s for s in otel.spans() if s.name == "tools/call echo"]
    assert {s.kind for s in spans} == {SpanKind.SERVER, SpanKind.CLIENT}
    for span in spans:
        attributes = dict(span.attributes or {})
        assert attributes["network.transport"] == "tcp"
        assert attributes["network.protocol.name"] == "websocket"
        assert attributes["mcp.protocol.version"] == era
