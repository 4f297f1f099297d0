"""Over stdio streams (in memory): ``pipe`` spans, session durations, a cancelled request,
and Prometheus beside OpenTelemetry."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing
from opentelemetry.trace import SpanKind
from prometheus_client import CollectorRegistry

from tests.telemetry.test_prometheus import samples
from trimcp.client import ClientSessionOptions, open_client_session
from trimcp.server import MCPServer
from trimcp.sessions import serve_session
from trimcp.telemetry import RequestMetrics
from trimcp.transports import StdioStream

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from tests.telemetry.conftest import Otel
    from trimcp.client import ClientSession


def slow_server() -> MCPServer:
    server = MCPServer("stdio-observed")

    @server.tool()
    async def wait(seconds: float) -> str:
        """Wait, then answer."""
        await trio.sleep(seconds)
        return "waited"

    return server


@asynccontextmanager
async def over_stdio(era: str) -> AsyncIterator[ClientSession]:
    """A client session and a server session joined by two in-memory pipes."""
    to_server = trio.testing.memory_stream_one_way_pair()
    to_client = trio.testing.memory_stream_one_way_pair()
    server_end = StdioStream(to_server[1], to_client[0])
    client_end = StdioStream(to_client[1], to_server[0])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve_session, slow_server(), server_end)
        async with open_client_session(
            client_end, options=ClientSessionOptions(protocol_version=era)
        ) as client:
            yield client
        await client_end.aclose()


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_stdio_spans_say_pipe_and_sessions_are_timed(
    otel: Otel, era: str, autojump_clock: trio.testing.MockClock
) -> None:
    registry = CollectorRegistry()
    with RequestMetrics(registry):
        async with over_stdio(era) as client:
            assert (await client.call_tool("wait", {"seconds": 1})).text == "waited"
            with trio.move_on_after(5):
                await client.call_tool("wait", {"seconds": 60})
            await trio.testing.wait_all_tasks_blocked()
    spans = [s for s in otel.spans() if s.name == "tools/call wait"]
    server_spans = [s for s in spans if s.kind is SpanKind.SERVER]
    client_spans = [s for s in spans if s.kind is SpanKind.CLIENT]
    assert len(server_spans) == len(client_spans) == 2
    for span in spans:
        assert dict(span.attributes or {})["network.transport"] == "pipe"
        assert "network.protocol.name" not in dict(span.attributes or {})
    outcomes = sorted(str(dict(s.attributes or {}).get("error.type")) for s in server_spans)
    assert outcomes == ["None", "cancelled"]
    [cancelled_client] = [s for s in client_spans if s.attributes and "error.type" in s.attributes]
    assert dict(cancelled_client.attributes or {})["error.type"] == "cancelled"
    counted = samples(registry)
    labels = (("method", "tools/call"), ("outcome", "cancelled"))
    assert counted["trimcp_requests_total", labels] == 1
    assert counted["trimcp_requests_total", (("method", "tools/call"), ("outcome", "ok"))] == 1
    versions = {}
    for side in ("server", "client"):
        [point] = otel.points(f"mcp.{side}.session.duration")
        assert point.count == 1
        assert dict(point.attributes or {})["network.transport"] == "pipe"
        versions[side] = dict(point.attributes or {}).get("mcp.protocol.version")
    # A 2026-07-28 client never negotiates with the server's stdio session: no version.
    assert versions == {"server": era if era == "2025-11-25" else None, "client": era}
