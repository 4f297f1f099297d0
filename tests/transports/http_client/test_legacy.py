"""``open_legacy_sse_client_stream`` against trimcp's 2024-11-05 HTTP+SSE endpoint."""

from __future__ import annotations

import pytest
import trio

from tests.http._client import running
from trimcp.errors import ConnectFailed, EndpointNotFound, TransportClosed
from trimcp.http import HttpOptions
from trimcp.transports.http_client._legacy import open_legacy_sse_client_stream

from .test_helpers import call_tool, initialize, streaming_server

pytestmark = pytest.mark.slow


def sse_url(mcp_url: str) -> str:
    return mcp_url.removesuffix("/mcp") + "/sse"


async def test_messages_go_by_post_and_come_back_as_events() -> None:
    options = HttpOptions(legacy_sse=True)
    async with running(streaming_server(), options) as listener:
        async with open_legacy_sse_client_stream(sse_url(listener.url)) as stream:
            assert stream.endpoint.startswith(listener.url.removesuffix("/mcp") + "/messages?")
            result = await initialize(stream, "2024-11-05")
            assert result["protocolVersion"] == "2024-11-05"
            seen: list[dict[str, object]] = []
            answer = await call_tool(stream, "progress", {"steps": 3}, progress=True, seen=seen)
            assert answer["result"]["content"][0]["text"] == "3 steps"
            assert len(seen) == 3
            assert listener.manager.statistics().live == 1
        with trio.fail_after(5):
            while listener.manager.statistics().live:  # noqa: ASYNC110  # the server ends it on its own
                await trio.sleep(0.01)
        with pytest.raises(TransportClosed):
            await stream.receive_message()


async def test_a_missing_sse_endpoint_is_explained() -> None:
    async with running(streaming_server()) as listener:
        with pytest.raises(EndpointNotFound, match="HTTP 404"):
            async with open_legacy_sse_client_stream(sse_url(listener.url)):
                pass


async def test_a_streamable_endpoint_sends_no_endpoint_event() -> None:
    async with running(streaming_server()) as listener:
        # GET on the Streamable HTTP endpoint without a session: refused with 400.
        with pytest.raises(ConnectFailed, match="HTTP 400"):
            async with open_legacy_sse_client_stream(listener.url, connect_timeout=2):
                pass
