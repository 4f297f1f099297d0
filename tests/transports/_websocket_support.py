"""Real WebSocket connections on 127.0.0.1 for the tests: trio-websocket and hypercorn.

``websocket_pair`` and ``asgi_pair`` yield a connected (client, server) pair of streams:
the client from ``open_websocket_stream``, the server from ``serve_websocket`` or from
``accept_asgi_websocket`` inside a minimal ASGI app served by hypercorn. The server side
stays open until the block ends; everything is closed and stopped on exit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

import hypercorn.trio
import trio
import trio_websocket
from hypercorn.config import Config

from trimcp.http._h1 import serve_h1
from trimcp.transports._asgi_websocket import AsgiWebSocketStream, accept_asgi_websocket
from trimcp.transports._websocket import WebSocketStream
from trimcp.transports._websocket_client import open_websocket_stream
from trimcp.transports._websocket_server import WebSocketServerInfo, serve_websocket

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping, MutableMapping

    from trimcp.transports._origin import OriginPolicy

ASGI_PATH = "/mcp/ws"

AsgiOnStream = Callable[[AsgiWebSocketStream], Awaitable[None]]


async def _lifespan(
    receive: Callable[[], Awaitable[Mapping[str, Any]]],
    send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        else:
            await send({"type": "lifespan.shutdown.complete"})
            return


def mcp_asgi_app(
    on_stream: AsgiOnStream,
    *,
    policy: OriginPolicy | None = None,
    max_message_size: int = 1000,
) -> Callable[..., Awaitable[None]]:
    """Return an ASGI app serving ``on_stream`` at ``ASGI_PATH``; anything else is refused."""

    async def app(
        scope: Mapping[str, Any],
        receive: Callable[[], Awaitable[Mapping[str, Any]]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] == "websocket" and scope["path"] == ASGI_PATH:
            stream = await accept_asgi_websocket(
                scope, receive, send, policy=policy, max_message_size=max_message_size
            )
            if stream is not None:
                try:
                    await on_stream(stream)
                finally:
                    await stream.aclose()
        elif scope["type"] == "websocket":
            await receive()
            await send({"type": "websocket.close", "code": 1008})
        else:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})

    return app


#: Which server ``serve_asgi`` runs: ``"hypercorn"`` or ``"trimcp"`` (set by a fixture).
ASGI_ENGINE = ["hypercorn"]


@asynccontextmanager
async def serve_asgi(app: Callable[..., Awaitable[None]]) -> AsyncIterator[str]:
    """Serve ``app`` on 127.0.0.1:0; yield the ``ws://`` URL of ``ASGI_PATH``.

    The server is ``ASGI_ENGINE[0]``: hypercorn, or trimcp's own HTTP/1.1 server (whose
    WebSocket upgrade speaks the same ASGI messages); tests/transports/test_asgi_websocket.py
    runs every test on both.
    """
    if ASGI_ENGINE[0] == "trimcp":
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        port = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            await nursery.start(partial(serve_h1, app, listeners))
            try:
                yield f"ws://127.0.0.1:{port}{ASGI_PATH}"
            finally:
                nursery.cancel_scope.cancel()
        return
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = None
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(partial(hypercorn.trio.serve, app, config))
        try:
            yield binds[0].replace("http://", "ws://") + ASGI_PATH
        finally:
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def serving(
    on_stream: Callable[[WebSocketStream], Awaitable[None]], **options: Any
) -> AsyncIterator[WebSocketServerInfo]:
    """Run ``serve_websocket`` for the block; yield where it listens."""
    async with trio.open_nursery() as nursery:
        info: WebSocketServerInfo = await nursery.start(
            partial(serve_websocket, on_stream, **options)
        )
        try:
            yield info
        finally:
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def websocket_pair(limit: int) -> AsyncIterator[tuple[WebSocketStream, WebSocketStream]]:
    """Yield (client, server) streams of one trio-websocket connection."""
    send_channel, receive_channel = trio.open_memory_channel[WebSocketStream](1)
    release = trio.Event()

    async def on_stream(stream: WebSocketStream) -> None:
        await send_channel.send(stream)
        await release.wait()

    async with (
        serving(on_stream, max_message_size=limit) as info,
        open_websocket_stream(info.url, max_message_size=limit) as client,
    ):
        server = await receive_channel.receive()
        try:
            yield client, server
        finally:
            release.set()


@asynccontextmanager
async def asgi_pair(limit: int) -> AsyncIterator[tuple[WebSocketStream, AsgiWebSocketStream]]:
    """Yield (client, server) streams of one connection to an ASGI app under hypercorn."""
    send_channel, receive_channel = trio.open_memory_channel[AsgiWebSocketStream](1)
    release = trio.Event()

    async def on_stream(stream: AsgiWebSocketStream) -> None:
        await send_channel.send(stream)
        await release.wait()

    async with (
        serve_asgi(mcp_asgi_app(on_stream, max_message_size=limit)) as url,
        open_websocket_stream(url, max_message_size=limit) as client,
    ):
        server = await receive_channel.receive()
        try:
            yield client, server
        finally:
            release.set()


@asynccontextmanager
async def raw_client(
    port: int, *, subprotocols: list[str], path: str = ASGI_PATH
) -> AsyncIterator[trio_websocket.WebSocketConnection]:
    """Yield a bare trio-websocket client connection to 127.0.0.1:``port``.

    The TCP stream is opened and closed here: trio-websocket's own clients leak their socket
    when the server closes first or refuses the handshake. A refusal is raised as the
    ``ConnectionRejected`` itself, not in an exception group.
    """
    tcp = await trio.open_tcp_stream("127.0.0.1", port)
    try:
        async with trio.open_nursery() as nursery:
            connection = await trio_websocket.wrap_client_stream(
                nursery, tcp, f"127.0.0.1:{port}", path, subprotocols=subprotocols
            )
            try:
                yield connection
            finally:
                await connection.aclose()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    finally:
        await trio.aclose_forcefully(tcp)
