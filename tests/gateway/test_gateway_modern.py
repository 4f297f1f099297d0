"""The gateway answering MCP 2026-07-28 clients: discover, results, refusals, listen streams.

Requests are served as a transport serves them (``ModernRequest`` over a checked ``_meta``),
in front of a gateway over two in-memory ``MCPServer`` backends.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import orjson
import trio

from tests.gateway.conftest import Era, backend_options
from tests.modern_requests import Sink
from trimcp.gateway import Gateway
from trimcp.protocol import Request, read_request_meta
from trimcp.server import MCPServer
from trimcp.sessions import ModernRequest

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.protocol import JsonObject

META: JsonObject = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _alpha() -> MCPServer:
    server = MCPServer("alpha")

    @server.tool()
    def search(query: str) -> str:
        """Search alpha."""
        return f"alpha:{query}"

    @server.resource("note://alpha/one")
    def one() -> str:
        return "alpha one"

    return server


@asynccontextmanager
async def _gateway(alpha: MCPServer, era: Era = "modern") -> AsyncIterator[Gateway]:
    gateway = Gateway(local=[("alpha", alpha)], local_options=backend_options(era, "alpha"))
    async with gateway.open():
        await gateway.wait_settled()
        yield gateway


async def _send(
    gateway: Gateway, method: str, params: JsonObject | None = None, sink: Sink | None = None
) -> Any:
    body: JsonObject = {**(params or {}), "_meta": META}
    request = Request(id=7, method=method, params=body)
    modern = ModernRequest(gateway, request, read_request_meta(body), sink or Sink())
    return orjson.loads(await modern.run())


async def test_discover_and_results_carry_the_revision_s_fields(backend_era: Era) -> None:
    async with _gateway(_alpha(), backend_era) as gateway:
        discovered = (await _send(gateway, "server/discover"))["result"]
        tools = (await _send(gateway, "tools/list"))["result"]
        called = (
            await _send(
                gateway, "tools/call", {"name": "alpha__search", "arguments": {"query": "q"}}
            )
        )["result"]
        read = (await _send(gateway, "resources/read", {"uri": "note://alpha/one"}))["result"]
    assert "2026-07-28" in discovered["supportedVersions"]
    assert discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "trimcp-gateway"
    assert "tools" in discovered["capabilities"]
    assert (discovered["resultType"], discovered["cacheScope"]) == ("complete", "public")
    assert [tool["name"] for tool in tools["tools"]] == ["alpha__search"]
    assert tools["ttlMs"] == 60_000
    assert called["content"] == [{"type": "text", "text": "alpha:q"}]
    assert called["resultType"] == "complete"
    assert read["contents"][0]["text"] == "alpha one"
    assert read["ttlMs"] == 0


async def test_removed_methods_and_unknown_resources_get_the_revision_s_errors() -> None:
    async with _gateway(_alpha()) as gateway:
        ping = await _send(gateway, "ping")
        level = await _send(gateway, "logging/setLevel", {"level": "info"})
        subscribe = await _send(gateway, "resources/subscribe", {"uri": "note://alpha/one"})
        missing = await _send(gateway, "resources/read", {"uri": "note://nowhere"})
    for refused in (ping, level, subscribe):
        assert refused["error"]["code"] == -32601
        assert "2026-07-28" in refused["error"]["message"]
    assert missing["error"]["code"] == -32602
    assert missing["error"]["data"] == {"uri": "note://nowhere"}


async def test_a_listen_stream_gets_the_backends_list_changes_and_updates(
    backend_era: Era,
) -> None:
    alpha = _alpha()
    async with _gateway(alpha, backend_era) as gateway:
        sink = Sink()
        answers: list[Any] = []
        notifications = {
            "toolsListChanged": True,
            "promptsListChanged": True,
            "resourceSubscriptions": ["note://alpha/one", "note://nowhere"],
        }

        async def listen() -> None:
            answers.append(
                await _send(gateway, "subscriptions/listen", {"notifications": notifications}, sink)
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(listen)
            await sink.arrived.wait()
            (ack,) = sink.messages
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            # The gateway offers prompts; an unknown URI is left out of the honoured filter.
            assert ack["params"]["notifications"] == {
                "toolsListChanged": True,
                "promptsListChanged": True,
                "resourceSubscriptions": ["note://alpha/one"],
            }
            assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7}

            sink.arrived = trio.Event()
            alpha.add_tool(lambda: "new", "fresh")
            await sink.arrived.wait()
            changed = sink.messages[1]
            assert changed["method"] == "notifications/tools/list_changed"
            assert changed["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7}

            sink.arrived = trio.Event()
            await alpha.notify_resource_updated("note://alpha/one")
            await sink.arrived.wait()
            updated = sink.messages[-1]
            assert updated["method"] == "notifications/resources/updated"
            assert updated["params"]["uri"] == "note://alpha/one"
            assert updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7
            nursery.cancel_scope.cancel()
        assert answers == []  # cancelled: the client closed the stream
        # The listener left every broadcast set and subscription.
        assert gateway._subscribers.members == {}
