"""A server played by the test, over memory streams, for ``ClientSession`` tests.

``FakeServer`` reads what the client sent (``expect``) and writes raw JSON-RPC back, as a
2025-11-25 server (``handshake``: it refuses the dual-era probe, then initializes) or as a
2026-07-28 one (``discover``: it answers the probe, and every request carries ``_meta``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
import trio

if TYPE_CHECKING:
    from trimcp.transports import MemoryMessageStream

MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
ALL = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True},
    "prompts": {},
    "logging": {},
    "completions": {},
}


def discover_result(
    capabilities: dict[str, Any] | None = None, *, ttl_ms: int = 0, scope: str = "public"
) -> dict[str, Any]:
    """A ``DiscoverResult`` of a 2026-07-28 server (and the handshake versions)."""
    return {
        "supportedVersions": [MODERN, "2025-11-25"],
        "capabilities": ALL if capabilities is None else capabilities,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "2"}},
        "instructions": "be modern",
        "resultType": "complete",
        "ttlMs": ttl_ms,
        "cacheScope": scope,
    }


class FakeServer:
    """The server end of a memory pair, driven by the test."""

    def __init__(self, stream: MemoryMessageStream) -> None:
        self.stream = stream
        self.ready = trio.Event()

    async def receive(self) -> dict[str, Any]:
        message = orjson.loads(await self.stream.receive_message())
        assert isinstance(message, dict)
        return message

    async def expect(self, method: str) -> dict[str, Any]:
        message = await self.receive()
        assert message.get("method") == method, message
        return message

    async def send(self, message: dict[str, Any] | bytes) -> None:
        data = message if isinstance(message, bytes) else orjson.dumps(message)
        await self.stream.send_message(data)

    async def answer(self, request: dict[str, Any], result: dict[str, Any]) -> None:
        await self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    async def fail(
        self, request: dict[str, Any], code: int, message: str, data: object = None
    ) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        await self.send({"jsonrpc": "2.0", "id": request["id"], "error": error})

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def handshake(
        self, capabilities: dict[str, Any] | None = None, *, probed: bool = True
    ) -> dict[str, Any]:
        """Refuse the dual-era probe as a 2025-11-25 server does (unless not ``probed``:
        a renewal, or a known era), then initialize."""
        if probed:
            probe = await self.expect("server/discover")
            await self.fail(probe, -32600, "Received server/discover before initialize")
        init = await self.expect("initialize")
        await self.answer(
            init,
            {
                "protocolVersion": init["params"]["protocolVersion"],
                "capabilities": ALL if capabilities is None else capabilities,
                "serverInfo": {"name": "fake", "version": "1"},
                "instructions": "be nice",
            },
        )
        initialized = await self.expect("notifications/initialized")
        assert "params" not in initialized
        self.ready.set()
        return init

    async def discover(self, result: dict[str, Any] | None = None) -> dict[str, Any]:
        """Answer the dual-era probe as a 2026-07-28 server does."""
        probe = await self.expect("server/discover")
        assert probe["params"]["_meta"][META_VERSION] == MODERN
        await self.answer(probe, discover_result() if result is None else result)
        self.ready.set()
        return probe
