"""MCP over WebSocket with trio-websocket: ``WebSocketStream``, one connection's messages.

``WebSocketStream`` carries one JSON-RPC message per text frame over a trio-websocket
``WebSocketConnection``; framing, close codes and the subprotocol follow ``_ws_protocol.py``.
``open_websocket_stream`` (``_websocket_client.py``) and ``serve_websocket``
(``_websocket_server.py``) make the connections; the ASGI flavour for the HTTP transport's
app is ``_asgi_websocket.py``.

trio-websocket runs a reader task per connection that answers pings and close frames on its
own and queues whole messages (one at a time: its default queue of 1). The stream adds no
task of its own, so ``receive_ready`` has nothing to hand over and returns ``[]``.

What trio-websocket 0.12 leaves to its caller, handled here and in the two modules above:

* its ``max_message_size`` counts characters of text, so messages are measured again in
  bytes;
* exceptions from wsproto and h11 on malformed input escape its reader task (a ``Host``
  header that is not IDNA raises ``UnicodeError``), and its ``serve_websocket`` lets one
  such connection stop the whole server; ``ReaderGuard`` keeps them to their connection;
* a client whose server closed first never closes its socket, so the client opens (and
  closes) the TCP stream itself.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final, final

import trio
import trio_websocket

from trimcp.errors import MessageTooLarge, TransportBroken, TransportClosed
from trimcp.protocol import DEFAULT_MAX_MESSAGE_SIZE

from ._ws_protocol import (
    BINARY_REFUSED,
    CloseCode,
    close_reason,
    describe_close,
    end_of_stream,
    message_from_text,
    texts_from_messages,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

__all__ = ["DEFAULT_CLOSE_TIMEOUT", "ReaderGuard", "WebSocketStream"]

logger = logging.getLogger(__name__)

#: Seconds a closing handshake may take before the TCP connection is dropped: the shutdown
#: budget of a worker (``ChildSpec.shutdown``).
DEFAULT_CLOSE_TIMEOUT: Final = 5.0


@final
class WebSocketStream(trio.abc.AsyncResource):
    """A ``MessageStream`` over one trio-websocket connection: a text frame per message.

    Build one with ``open_websocket_stream`` or get one from ``serve_websocket``; wrapping a
    connection opened otherwise works too (give trio-websocket the same ``max_message_size``).

    Receiving: a binary frame closes the connection with 1003 and raises ``TransportBroken``;
    a message over ``max_message_size`` UTF-8 bytes closes it with 1009 and raises
    ``MessageTooLarge`` once (``_ws_protocol`` says why the stream does not carry on), after
    which receiving raises ``TransportBroken``. When the peer closes, messages it sent before
    are still returned; then 1000 or 1001 raise ``TransportClosed``, anything else
    ``TransportBroken``. Cancelling a receive loses no message.

    Sending writes one text frame per message; ``send_messages`` checks every message is
    UTF-8 before it writes any. Closing (``aclose``, idempotent) sends a close frame (1000
    unless told otherwise), wakes a blocked receiver with ``TransportClosed`` and waits up to
    ``close_timeout`` seconds for the peer's close frame before dropping the connection.
    """

    def __init__(
        self,
        connection: trio_websocket.WebSocketConnection,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
    ) -> None:
        if max_message_size < 1:
            raise ValueError(f"max_message_size must be >= 1, not {max_message_size}")
        self._connection = connection
        self._max_message_size = max_message_size
        self._close_timeout = close_timeout
        self._closed = False
        self._close_done = trio.Event()
        # Why this side ended the connection because of what the peer sent (1003, 1009).
        self._failure: str | None = None
        # The close frame this side sent first, if it did: trio-websocket records 1000 for
        # any close it starts.
        self._sent_close: tuple[int, str] | None = None

    @property
    def subprotocol(self) -> str | None:
        """The subprotocol the handshake settled on (``"mcp"`` for streams built here)."""
        return self._connection.subprotocol

    @property
    def close_code(self) -> int | None:
        """The code of the close frame that ended the connection, ``None`` while it is open.

        The one this side sent if it closed first, else the peer's; 1006 if the connection
        was lost without one.
        """
        if self._sent_close is not None:
            return self._sent_close[0]
        closed = self._connection.closed
        return None if closed is None else closed.code

    async def receive_message(self) -> bytes:
        """Return the next message (see the class docstring for the errors)."""
        self._check_usable()
        try:
            frame = await self._connection.get_message()
        except trio_websocket.ConnectionClosed as exc:
            raise self._ended(exc.reason) from None
        if isinstance(frame, bytes):
            await self._fail(CloseCode.UNSUPPORTED_DATA, BINARY_REFUSED)
            raise TransportBroken(self._failure)
        message = message_from_text(frame, self._max_message_size)
        if isinstance(message, MessageTooLarge):
            await self._fail(CloseCode.MESSAGE_TOO_BIG, f"message over {message.limit} bytes")
            raise message
        return message

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return ``[]``: messages arrive one at a time through trio-websocket's queue."""
        return []

    async def send_message(self, data: bytes) -> None:
        """Send ``data`` as one text frame.

        Raises:
            LocalProtocolError: ``data`` is not UTF-8; nothing was sent.
            TransportClosed: this stream was closed.
            TransportBroken: the connection is over (the peer closed it, or it was lost).
        """
        await self.send_messages((data,))

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """Send each message as a text frame, in order.

        If cancelled mid-way, a prefix of the messages has been sent.

        Raises:
            LocalProtocolError: a message is not UTF-8; nothing was sent.
            TransportClosed: this stream was closed.
            TransportBroken: the connection is over (the peer closed it, or it was lost).
        """
        self._check_usable()
        texts = texts_from_messages(messages)
        if not texts:
            await trio.lowlevel.checkpoint()
            return
        try:
            for text in texts:
                await self._connection.send_message(text)
        except trio_websocket.ConnectionClosed as exc:
            if self._closed:
                raise TransportClosed("the WebSocket stream is closed") from None
            reason = exc.reason
            words = describe_close(reason.code, reason.reason) if reason else "not open"
            raise TransportBroken(f"the WebSocket connection is over: {words}") from None

    async def aclose(self, *, code: int = CloseCode.NORMAL_CLOSURE, reason: str = "") -> None:
        """Close with ``code`` and ``reason``, waiting for the peer's close frame (bounded).

        Idempotent: only the first call sends a close frame; later calls wait until that
        close is over. If cancelled, the connection is dropped without waiting.
        """
        if self._closed:
            await self._close_done.wait()
            return
        self._closed = True
        try:
            await self._close(code, reason)
        finally:
            self._close_done.set()

    # --- internals ----------------------------------------------------------------------

    def _check_usable(self) -> None:
        if self._closed:
            raise TransportClosed("the WebSocket stream is closed")
        if self._failure is not None:
            raise TransportBroken(self._failure)

    async def _fail(self, code: CloseCode, reason: str) -> None:
        self._failure = f"this side closed the WebSocket: {describe_close(code, reason)}"
        await self._close(code, reason)

    async def _close(self, code: int, reason: str) -> None:
        reason = close_reason(reason)
        if self._connection.closed is None:
            self._sent_close = (code, reason)
        with trio.move_on_after(self._close_timeout):
            await self._connection.aclose(code, reason or None)

    def _ended(
        self, reason: trio_websocket.CloseReason | None
    ) -> TransportClosed | TransportBroken | MessageTooLarge:
        """Return the error for a receive that found the connection over."""
        if self._closed:
            return TransportClosed("the WebSocket stream is closed")
        if self._failure is not None:
            return TransportBroken(self._failure)
        if reason is None:
            return TransportBroken("the WebSocket connection is not open")
        if reason.code == CloseCode.MESSAGE_TOO_BIG and _closed_by_library(self._connection):
            # trio-websocket refused an incoming message itself, before it reached us.
            limit = self._max_message_size
            self._failure = "this side closed the WebSocket: " + describe_close(
                reason.code, f"message over {limit} bytes"
            )
            return MessageTooLarge(limit + 1, limit)
        return end_of_stream(reason.code, reason.reason, closed_here=False)


def _closed_by_library(connection: trio_websocket.WebSocketConnection) -> bool:
    """Tell whether trio-websocket itself started the close, which it does only for size.

    trio-websocket 0.12 has no public way to say who closed, and it sends the peer the very
    reason it records, so a peer's 1009 looks the same. Its wsproto connection knows: a
    close this side started stays ``LOCAL_CLOSING`` (trio-websocket stops reading right
    after sending it), one the peer started is ``CLOSED`` once answered. This stream's own
    closes never get here. tests/transports/test_websocket.py pins both cases.
    """
    state = getattr(getattr(connection, "_wsproto", None), "state", None)
    return getattr(state, "name", None) == "LOCAL_CLOSING"


@final
class ReaderGuard:
    """Stands in for the nursery of trio-websocket's reader task; keeps its crash local.

    Pass it (cast to ``trio.Nursery``) to ``wrap_client_stream`` / ``wrap_server_stream``,
    which only call ``start_soon``. The reader then runs in ``nursery``; if it raises
    (malformed input from the peer, or ``ConnectionRejected`` on the client), the exception
    is kept in ``crash`` and the TCP stream closed, so that everyone waiting on the
    connection sees it end instead of the error stopping the nursery. Whenever the reader
    stops, ``handshake`` (the scope of the wait for the opening handshake, while set) is
    cancelled: without a reader that handshake can never finish.
    """

    def __init__(self, nursery: trio.Nursery, tcp: trio.abc.AsyncResource) -> None:
        self._nursery = nursery
        self._tcp = tcp
        self.crash: Exception | None = None
        self.handshake: trio.CancelScope | None = None

    def start_soon(self, reader: Callable[..., Awaitable[object]], *args: object) -> None:
        """Start ``reader(*args)`` in the nursery, guarded."""
        self._nursery.start_soon(self._run, reader, *args)

    async def _run(self, reader: Callable[..., Awaitable[object]], *args: object) -> None:
        try:
            await reader(*args)
        except Exception as exc:  # noqa: BLE001  (what a peer's bytes break stays in its connection)
            self.crash = exc
            if not isinstance(exc, trio_websocket.ConnectionRejected):
                logger.info("WebSocket connection dropped: reading it failed (%r)", exc)
            await trio.aclose_forcefully(self._tcp)
        finally:
            if self.handshake is not None:
                self.handshake.cancel()
