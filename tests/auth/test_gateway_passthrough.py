"""The gateway never passes a client's token (or identity) to the servers behind it.

MCP 2025-11-25, Basic > Authorization > Access Token Privilege Restriction: a server MUST
NOT pass the token it received to upstream APIs. Here the gateway is protected by a
resource server, its one upstream is a trimcp server over HTTP, and every byte the gateway
sends the upstream goes through a recording TCP relay the test reads afterwards.
"""

from __future__ import annotations

import contextlib
import functools
from typing import TYPE_CHECKING

import pytest
import trio

from tests.auth._protected import protected, text_of
from trimcp.client import ServerConfig
from trimcp.gateway import Gateway
from trimcp.server import Context, MCPServer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.slow


def upstream_server() -> MCPServer:
    server = MCPServer("upstream")

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Say whether this server sees an identity."""
        return "nobody" if ctx.identity is None else f"{ctx.identity.subject}"

    return server


@contextlib.asynccontextmanager
async def recording_relay(target_port: int) -> AsyncIterator[tuple[int, list[bytes]]]:
    """Relay 127.0.0.1:PORT to ``target_port``; yield the port and the bytes sent upstream."""
    sent: list[bytes] = []

    async def pump(source: trio.SocketStream, sink: trio.SocketStream, keep: bool) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            async for data in source:
                if keep:
                    sent.append(data)
                await sink.send_all(data)
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await sink.send_eof()

    async def relay(client: trio.SocketStream) -> None:
        async with (
            client,
            await trio.open_tcp_stream("127.0.0.1", target_port) as upstream,
            trio.open_nursery() as nursery,
        ):
            nursery.start_soon(pump, client, upstream, True)
            nursery.start_soon(pump, upstream, client, False)

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            functools.partial(trio.serve_tcp, relay, 0, host="127.0.0.1")
        )
        try:
            yield listeners[0].socket.getsockname()[1], sent
        finally:
            nursery.cancel_scope.cancel()


async def test_the_gateway_sends_upstream_neither_the_token_nor_the_identity() -> None:
    async with trio.open_nursery() as nursery:
        listener = await nursery.start(upstream_server().serve_http)
        upstream_port = int(listener.url.split(":")[2].split("/")[0])
        async with recording_relay(upstream_port) as (relay_port, sent):
            config = ServerConfig(
                name="up", transport="http", url=f"http://127.0.0.1:{relay_port}/mcp"
            )
            gateway = Gateway({"up": config})
            async with gateway.open():
                await gateway.wait_settled()
                async with protected(handler=gateway) as p:
                    token = p.token(sub="alice", scope="mcp files:write")
                    session = await p.initialize(token)
                    answer = await p.call(token, session, "up__whoami")
                    assert text_of(answer) == "nobody"
        nursery.cancel_scope.cancel()
    upstream_bytes = b"".join(sent)
    assert b"tools/call" in upstream_bytes  # the call did go through the relay
    assert b"authorization:" not in upstream_bytes.lower()
    for part in token.split("."):
        assert part.encode() not in upstream_bytes
    assert b"alice" not in upstream_bytes
