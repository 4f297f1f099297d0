"""A WebSocket upgrade on ``_h1.py``'s connections, shown to the application as ASGI.

``_h1.py`` reads a request head, sees ``Upgrade: websocket`` and hands over the connection
with the bytes it has read so far. trio-websocket (wsproto) then reads that same handshake
again from a stream that replays those bytes first, and this module translates between its
``WebSocketRequest`` / ``WebSocketConnection`` and the ASGI ``websocket`` scope's messages:

    websocket.connect                      <- the handshake request
    websocket.accept {subprotocol}         -> request.accept(...)
    websocket.http.response.start / .body  -> request.reject(status, headers, body)
    websocket.close before accepting       -> request.reject(403)
    websocket.receive {text | bytes}       <- connection.get_message()
    websocket.send {text | bytes}          -> connection.send_message(...)
    websocket.close {code, reason}         -> connection.aclose(code, reason)
    websocket.disconnect {code, reason}    <- the connection closed (either side)

trio-websocket refuses messages over ``max_message_size`` itself (close 1009). Its reader
task runs under ``ReaderGuard``, so malformed frames end this connection only.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any, Final, cast, final

import trio
import trio_websocket

from trimcp.transports import ReaderGuard

if TYPE_CHECKING:
    import socket

__all__ = ["serve_websocket_upgrade"]

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
App = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]
]

#: Seconds the handshake may take once its head has arrived (wsproto re-reads it at once).
_HANDSHAKE_TIMEOUT: Final = 10.0


@final
class _ReplayStream(trio.abc.HalfCloseableStream):
    """``stream``, except that the first reads return ``prefix`` (bytes already read)."""

    def __init__(self, prefix: bytes, stream: trio.abc.Stream) -> None:
        self._prefix = prefix
        self._stream = stream

    @property
    def socket(self) -> socket.socket:  # trio-websocket reads addresses from it
        return cast("socket.socket", getattr(self._stream, "socket", None))

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._prefix:
            size = len(self._prefix) if max_bytes is None else max_bytes
            data, self._prefix = self._prefix[:size], self._prefix[size:]
            await trio.lowlevel.checkpoint()
            return data
        return bytes(await self._stream.receive_some(max_bytes))

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self._stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self._stream.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        if isinstance(self._stream, trio.abc.HalfCloseableStream):
            await self._stream.send_eof()

    async def aclose(self) -> None:
        await self._stream.aclose()


def _subprotocols(scope: Scope) -> list[str]:
    names: list[str] = []
    for name, value in scope["headers"]:
        if name == b"sec-websocket-protocol":
            names.extend(
                part.strip() for part in value.decode("latin-1").split(",") if part.strip()
            )
    return names


@final
class _Bridge:
    """The ASGI ``receive`` / ``send`` of one upgraded connection."""

    def __init__(self, request: trio_websocket.WebSocketRequest) -> None:
        self._request = request
        self._connection: trio_websocket.WebSocketConnection | None = None
        self._connect_sent = False
        self._answered = False
        self._refusal: tuple[int, list[tuple[bytes, bytes]], list[bytes]] | None = None

    async def receive(self) -> Message:
        if not self._connect_sent:
            self._connect_sent = True
            return {"type": "websocket.connect"}
        connection = self._connection
        if connection is None:
            # Refused or never accepted: nothing more comes from this client.
            await trio.lowlevel.checkpoint()
            return {"type": "websocket.disconnect", "code": 1006}
        try:
            message = await connection.get_message()
        except trio_websocket.ConnectionClosed as closed:
            reason = closed.reason
            code = reason.code if reason is not None else 1006
            text = reason.reason if reason is not None else None
            return {"type": "websocket.disconnect", "code": code, "reason": text or ""}
        if isinstance(message, str):
            return {"type": "websocket.receive", "text": message}
        return {"type": "websocket.receive", "bytes": message}

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "websocket.send":
            await self._send_data(message)
        elif kind == "websocket.accept":
            await self._accept(message)
        elif kind == "websocket.close":
            await self._close(message)
        elif kind == "websocket.http.response.start":
            self._refusal = (int(message["status"]), list(message.get("headers", ())), [])
        elif kind == "websocket.http.response.body":
            await self._refusal_body(message)
        else:
            raise RuntimeError(f"unexpected ASGI message {kind!r} for a websocket scope")

    async def _send_data(self, message: Message) -> None:
        if self._connection is None:
            raise RuntimeError("websocket.send before websocket.accept")
        text = message.get("text")
        payload: str | bytes = text if text is not None else bytes(message.get("bytes") or b"")
        try:
            await self._connection.send_message(payload)
        except trio_websocket.ConnectionClosed as closed:
            raise OSError(f"the WebSocket connection is closed: {closed.reason}") from closed

    async def _accept(self, message: Message) -> None:
        if self._answered:
            raise RuntimeError("websocket.accept after the handshake was answered")
        self._answered = True
        headers = [(bytes(name), bytes(value)) for name, value in message.get("headers", ())]
        self._connection = await self._request.accept(
            subprotocol=message.get("subprotocol"), extra_headers=headers
        )

    async def _close(self, message: Message) -> None:
        if self._connection is None:
            if not self._answered:
                self._answered = True
                await self._request.reject(403)
            return
        code = int(message.get("code", 1000))
        await self._connection.aclose(code=code, reason=message.get("reason") or None)

    async def _refusal_body(self, message: Message) -> None:
        if self._refusal is None or self._answered:
            raise RuntimeError("websocket.http.response.body without its start")
        self._refusal[2].append(bytes(message.get("body", b"")))
        if message.get("more_body", False):
            return
        self._answered = True
        status, headers, parts = self._refusal
        kept = [(name, value) for name, value in headers if name.lower() != b"content-length"]
        await self._request.reject(status, extra_headers=kept, body=b"".join(parts))

    async def finish(self) -> None:
        """After the application returned: refuse an unanswered handshake, close the rest."""
        if not self._answered:
            self._answered = True
            await self._request.reject(500)
        elif self._connection is not None and not self._connection.closed:
            await self._connection.aclose()


async def serve_websocket_upgrade(
    app: App,
    stream: trio.abc.Stream,
    prefix: bytes,
    scope: Scope,
    *,
    max_message_size: int,
) -> None:
    """Run ``app`` for the WebSocket handshake whose bytes start with ``prefix``."""
    scope["subprotocols"] = _subprotocols(scope)
    scope["extensions"] = {"websocket.http.response": {}}
    async with trio.open_nursery() as nursery:
        guard = ReaderGuard(nursery, stream)
        with trio.move_on_after(_HANDSHAKE_TIMEOUT) as waiting:
            guard.handshake = waiting
            request = await trio_websocket.wrap_server_stream(
                cast("trio.Nursery", guard),  # it only calls start_soon
                _ReplayStream(prefix, stream),
                max_message_size=max_message_size,
            )
        guard.handshake = None
        if waiting.cancelled_caught:
            nursery.cancel_scope.cancel()
            return
        bridge = _Bridge(request)
        try:
            await app(scope, bridge.receive, bridge.send)
            await bridge.finish()
        except trio_websocket.ConnectionClosed:
            pass  # the client left during the handshake's answer
        finally:
            nursery.cancel_scope.cancel()
