"""The 2024-11-05 HTTP+SSE transport, for old clients (off by default: ``legacy_sse``).

MCP 2024-11-05, Transports > HTTP with SSE (CHECKLIST §7.3): the client GETs the SSE
endpoint and keeps it open; the server's first event is ``endpoint``, whose data is the URL
to POST messages to; every server message then arrives as a ``message`` event on that one
stream, and every POST is answered 202 Accepted. A session lives exactly as long as its SSE
connection, so it is never expired or evicted while connected.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING

import trio

from trimcp.errors import TransportClosed
from trimcp.http._stream import ready_now
from trimcp.transports import encode_event

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.errors import MessageTooLarge

__all__ = ["LegacySseStream"]

# Messages queued for a slow SSE reader before the session waits for it.
_QUEUE = 64


@typing.final
class LegacySseStream:
    """The ``MessageStream`` of one legacy session: POST bodies in, one SSE stream out."""

    __slots__ = ("_in_receive", "_in_send", "_out_receive", "_out_send", "session_id")

    busy = True  # connection-bound: ends with its SSE connection

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._in_send, self._in_receive = trio.open_memory_channel[bytes](16)
        self._out_send, self._out_receive = trio.open_memory_channel[bytes](_QUEUE)

    async def feed(self, body: bytes) -> None:
        """Hand a POSTed message to the session.

        Raises:
            TransportClosed: the session has ended.
        """
        try:
            await self._in_send.send(body)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise TransportClosed("the session has ended") from None

    async def events(self) -> typing.AsyncGenerator[bytes, None]:
        """Yield the session's outgoing messages as SSE ``message`` events until it ends."""
        async with self._out_receive:
            async for data in self._out_receive:
                yield encode_event(data, event="message")

    async def receive_message(self) -> bytes:
        """Return the next POSTed message (see ``MessageStream``)."""
        try:
            return await self._in_receive.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise TransportClosed("the SSE connection closed") from None

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return the messages already POSTed, without waiting."""
        return ready_now(self._in_receive)

    async def send_message(self, data: bytes) -> None:
        """Queue one message for the SSE stream."""
        try:
            await self._out_send.send(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise TransportClosed("the SSE connection closed") from None

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """Queue messages for the SSE stream, in order."""
        for data in messages:
            await self.send_message(data)

    async def aclose(self) -> None:
        """End both directions; the SSE response ends after what is queued."""
        self._in_send.close()
        self._out_send.close()
