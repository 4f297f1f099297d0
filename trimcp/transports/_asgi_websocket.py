"""MCP over WebSocket inside an ASGI app: a ``MessageStream`` over ``receive``/``send``.

For the HTTP transport, whose ASGI app (on trimcp's HTTP/1.1 server or on hypercorn) mounts
this at ``/mcp/ws``:

    async def app(scope, receive, send):
        if scope["type"] == "websocket" and scope["path"] == "/mcp/ws":
            stream = await accept_asgi_websocket(scope, receive, send, policy=policy)
            if stream is not None:
                await run_session(stream)  # returns when the session ends
                await stream.aclose()

``accept_asgi_websocket`` makes the same handshake decisions as ``serve_websocket`` (Host and
Origin through ``OriginPolicy``, then subprotocol ``mcp``; see ``_ws_protocol.py``) and
refuses with an HTTP status and a plain-text body when the server offers the
``websocket.http.response`` extension (hypercorn does), else with ``websocket.close`` 1008,
which an ASGI server turns into a bare 403 before the handshake completes. The stream keeps
the framing and size rules of ``WebSocketStream``.

The ASGI app must not return while the stream is in use: returning ends the connection.
Messages are as large as the ASGI server lets them be before they get here (hypercorn's
``websocket_max_message_size``, counted in characters, default 16 MiB); give it the same
limit so that it refuses, with 1009, before it has buffered more.

Close codes the server reports: hypercorn (0.18) reports 1006 for every close the client
starts, clean or not (pgjones/hypercorn#127), so here a disconnect with 1000, 1001, 1005 or
1006 ends the stream with ``TransportClosed`` and only another code, which the client must
have sent, with ``TransportBroken``. Sending to a client that is gone raises
``TransportBroken`` if the server says so (an ``OSError``, as the ASGI spec asks); hypercorn
drops such messages silently until a receive has seen the disconnect.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Final, final

import trio

from trimcp.errors import MessageTooLarge, TransportBroken, TransportClosed
from trimcp.protocol import DEFAULT_MAX_MESSAGE_SIZE

from ._origin import OriginPolicy
from ._ws_protocol import (
    BINARY_REFUSED,
    SUBPROTOCOL,
    CloseCode,
    check_handshake,
    close_reason,
    describe_close,
    end_of_stream,
    message_from_text,
    texts_from_messages,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._origin import HeaderProblem

__all__ = [
    "AsgiReceive",
    "AsgiScope",
    "AsgiSend",
    "AsgiWebSocketStream",
    "accept_asgi_websocket",
]

logger = logging.getLogger(__name__)

#: An ASGI connection scope (only read here).
AsgiScope = Mapping[str, Any]
#: The ASGI ``receive`` callable of a ``websocket`` scope.
AsgiReceive = Callable[[], Awaitable[Mapping[str, Any]]]
#: The ASGI ``send`` callable of a ``websocket`` scope.
AsgiSend = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: Seconds ``aclose`` waits for the client's answering close frame.
DEFAULT_CLOSE_TIMEOUT: Final = 5.0

# Disconnect codes that end the stream cleanly (see the module docstring).
_CLEAN_DISCONNECT: Final = frozenset(
    {
        CloseCode.NORMAL_CLOSURE,
        CloseCode.GOING_AWAY,
        CloseCode.NO_STATUS_RCVD,
        CloseCode.ABNORMAL_CLOSURE,
    }
)


@final
class AsgiWebSocketStream(trio.abc.AsyncResource):
    """A ``MessageStream`` over an accepted ASGI websocket; get one from ``accept_asgi_websocket``.

    Receiving: a ``websocket.receive`` with text is one message; with bytes (a binary frame)
    the connection is closed with 1003 and ``TransportBroken`` raised; a message over
    ``max_message_size`` UTF-8 bytes closes it with 1009 and raises ``MessageTooLarge``
    once, then ``TransportBroken``. ``websocket.disconnect`` ends the stream (module
    docstring). ``receive_ready`` returns ``[]``: ASGI hands over one event per call.

    Sending: one ``websocket.send`` with text per message; non-UTF-8 data raises
    ``LocalProtocolError`` before anything is sent.

    Closing (``aclose``, idempotent): cancels a blocked receive (which raises
    ``TransportClosed``), sends ``websocket.close`` and waits up to ``close_timeout``
    seconds for the ``websocket.disconnect`` that follows the client's answer.
    """

    def __init__(
        self,
        receive: AsgiReceive,
        send: AsgiSend,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
    ) -> None:
        if max_message_size < 1:
            raise ValueError(f"max_message_size must be >= 1, not {max_message_size}")
        self._receive = receive
        self._send = send
        self._max_message_size = max_message_size
        self._close_timeout = close_timeout
        self._closed = False
        # Why this side ended the connection because of what the client sent (1003, 1009).
        self._failure: str | None = None
        # The websocket.disconnect seen, as (code, reason): nothing more will arrive.
        self._disconnect: tuple[int, str | None] | None = None
        self._close_sent = False
        # The scope of the receive in progress, for aclose to cancel.
        self._receiving: trio.CancelScope | None = None

    async def receive_message(self) -> bytes:
        """Return the next message (see the class docstring for the errors)."""
        self._check_usable()
        event = await self._next_event()
        kind = event.get("type")
        if kind == "websocket.receive":
            return await self._message_of(event)
        if kind == "websocket.disconnect":
            raise self._ended()
        self._failure = f"the ASGI server sent an unexpected {kind!r} event"
        raise TransportBroken(self._failure)

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return ``[]``: an ASGI server hands over one event per ``receive`` call."""
        return []

    async def send_message(self, data: bytes) -> None:
        """Send ``data`` as one text frame (errors as for ``send_messages``)."""
        await self.send_messages((data,))

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """Send each message as a text frame, in order.

        Raises:
            LocalProtocolError: a message is not UTF-8; nothing was sent.
            TransportClosed: this stream was closed.
            TransportBroken: the client is gone, or this side closed it for cause.
        """
        if self._disconnect is not None and not self._closed:
            code, reason = self._disconnect
            raise TransportBroken(f"the WebSocket client is gone: {describe_close(code, reason)}")
        self._check_usable()
        texts = texts_from_messages(messages)
        if not texts:
            await trio.lowlevel.checkpoint()
            return
        try:
            for text in texts:
                await self._send({"type": "websocket.send", "text": text})
        except OSError as exc:
            raise TransportBroken(f"the WebSocket client is gone: {exc!r}") from exc

    async def aclose(self, *, code: int = CloseCode.NORMAL_CLOSURE, reason: str = "") -> None:
        """Close with ``code`` and ``reason``; idempotent (see the class docstring)."""
        if self._closed:
            await trio.lowlevel.checkpoint()
            return
        self._closed = True
        if self._receiving is not None:
            self._receiving.cancel()
        await self._close(code, reason)

    # --- internals ----------------------------------------------------------------------

    def _check_usable(self) -> None:
        if self._closed or self._failure is not None or self._disconnect is not None:
            raise self._ended()

    def _ended(self) -> TransportClosed | TransportBroken:
        """Return the error for a stream that is over (closed, failed or disconnected)."""
        if self._failure is not None and not self._closed:
            return TransportBroken(self._failure)
        code, reason = self._disconnect or (None, None)
        return end_of_stream(code, reason, closed_here=self._closed, clean=_CLEAN_DISCONNECT)

    async def _next_event(self) -> Mapping[str, Any]:
        """Receive one ASGI event; ``aclose`` from another task cancels the wait."""
        with trio.CancelScope() as scope:
            self._receiving = scope
            try:
                event = await self._receive()
            finally:
                self._receiving = None
        if scope.cancelled_caught:
            raise TransportClosed("the WebSocket stream is closed")
        if event.get("type") == "websocket.disconnect":
            code = event.get("code", CloseCode.NO_STATUS_RCVD)
            reason = event.get("reason")
            self._disconnect = (
                code if isinstance(code, int) else CloseCode.NO_STATUS_RCVD,
                reason if isinstance(reason, str) else None,
            )
        return event

    async def _message_of(self, event: Mapping[str, Any]) -> bytes:
        text = event.get("text")
        if not isinstance(text, str):
            await self._fail(CloseCode.UNSUPPORTED_DATA, BINARY_REFUSED)
            raise TransportBroken(self._failure)
        message = message_from_text(text, self._max_message_size)
        if isinstance(message, MessageTooLarge):
            await self._fail(CloseCode.MESSAGE_TOO_BIG, f"message over {message.limit} bytes")
            raise message
        return message

    async def _fail(self, code: CloseCode, reason: str) -> None:
        self._failure = f"this side closed the WebSocket: {describe_close(code, reason)}"
        await self._close(code, reason)

    async def _close(self, code: int, reason: str) -> None:
        """Send ``websocket.close`` once, then wait (bounded) for the disconnect."""
        if self._close_sent or self._disconnect is not None:
            await trio.lowlevel.checkpoint()
            return
        self._close_sent = True
        try:
            await self._send(
                {"type": "websocket.close", "code": code, "reason": close_reason(reason)}
            )
        except OSError:
            return  # the client is gone already: nothing left to close
        with trio.move_on_after(self._close_timeout):
            while self._disconnect is None:
                await self._next_event()


async def accept_asgi_websocket(
    scope: AsgiScope,
    receive: AsgiReceive,
    send: AsgiSend,
    *,
    policy: OriginPolicy | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> AsgiWebSocketStream | None:
    """Check and answer the opening handshake of a ``websocket`` scope.

    Waits for ``websocket.connect``, then checks Host and Origin against ``policy``
    (default ``OriginPolicy()``: localhost only) and requires subprotocol ``mcp``. Accepts
    with ``mcp`` and returns the stream, or refuses (see the module docstring) and returns
    ``None``; ``None`` too if the client left before the handshake.

    Raises:
        ValueError: ``scope`` is not a ``websocket`` scope.
    """
    if scope.get("type") != "websocket":
        raise ValueError(f"not a websocket scope: type {scope.get('type')!r}")
    first = await receive()
    if first.get("type") != "websocket.connect":
        return None
    headers = [(bytes(name), bytes(value)) for name, value in scope.get("headers", ())]
    subprotocols = [str(name) for name in scope.get("subprotocols", ())]
    problem = check_handshake(policy or OriginPolicy(), headers, subprotocols)
    if problem is not None:
        level = logging.WARNING if problem.status in (403, 421) else logging.INFO
        logger.log(
            level, "refused a WebSocket handshake from %s: %s", scope.get("client"), problem.message
        )
        await _refuse(scope, send, problem)
        return None
    await send({"type": "websocket.accept", "subprotocol": SUBPROTOCOL})
    return AsgiWebSocketStream(receive, send, max_message_size=max_message_size)


async def _refuse(scope: AsgiScope, send: AsgiSend, problem: HeaderProblem) -> None:
    """Refuse with ``problem``'s status and message, or with a close if the server can't."""
    extensions = scope.get("extensions") or {}
    if "websocket.http.response" not in extensions:
        await send(
            {
                "type": "websocket.close",
                "code": CloseCode.POLICY_VIOLATION,
                "reason": close_reason(problem.message),
            }
        )
        return
    body = problem.message.encode()
    await send(
        {
            "type": "websocket.http.response.start",
            "status": problem.status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "websocket.http.response.body", "body": body})
