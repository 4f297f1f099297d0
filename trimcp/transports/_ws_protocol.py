"""The rules of MCP over WebSocket, shared by the trio-websocket and the ASGI adapters.

MCP 2025-11-25 defines no WebSocket transport; this follows what MCP WebSocket clients do
(the official TypeScript SDK's ``WebSocketClientTransport``, the Kotlin SDK, the Python SDK
v1): subprotocol ``mcp``, one JSON-RPC message per text frame. The decisions:

* **Subprotocol ``mcp`` is required.** Every MCP WebSocket client offers it, and browsers and
  Node's ``ws`` fail a connection whose server selects no subprotocol after they offered
  one, so accepting without it would only serve clients that are not MCP clients. A request
  without it is refused with 400 and a message saying what to send.
* **Text frames only.** A JSON-RPC message is UTF-8 JSON. A binary frame is closed with 1003
  Unsupported Data, the case RFC 6455 section 7.4.1 names for that code ("an endpoint that
  understands only text data MAY send this if it receives a binary message"). Invalid UTF-8
  in a text frame is wsproto's business: it closes with 1007.
* **Oversized messages close the connection with 1009** Message Too Big (RFC 6455 section
  7.4.1), as ``ws``, python-websockets and browsers do: the receiver raises
  ``MessageTooLarge`` once, then the stream is over. This departs from the ``MessageStream``
  rule that an oversized message leaves the stream usable, on purpose: WebSocket has a
  close code for exactly this, every WebSocket client surfaces it, and a client can simply
  reconnect, whereas a reply to an unknown request id (all a stream that carries on could
  send) helps no one. The WebSocket libraries below count text in characters, not bytes;
  the limit here is in UTF-8 bytes, so a message is checked once more when it arrives.
* **Close codes**: 1000 when either side closes normally, 1001 Going Away when the server
  stops, 1002 when a client finds no ``mcp`` subprotocol, 1003, 1007 and 1009 as above.
  When the peer closes with 1000 or 1001 the stream ends with ``TransportClosed``; any other
  code, or a connection lost without a close frame (1006), ends it with ``TransportBroken``.

Pure: no trio, no I/O.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Final

from trimcp.errors import LocalProtocolError, MessageTooLarge, TransportBroken, TransportClosed

from ._origin import HeaderProblem, check_headers

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ._origin import OriginPolicy

__all__ = [
    "BINARY_REFUSED",
    "SUBPROTOCOL",
    "CloseCode",
    "check_handshake",
    "close_reason",
    "describe_close",
    "end_of_stream",
    "message_from_text",
    "texts_from_messages",
]

#: The WebSocket subprotocol MCP clients offer (``Sec-WebSocket-Protocol: mcp``).
SUBPROTOCOL: Final = "mcp"

#: The close reason sent with 1003 when a binary frame arrives.
BINARY_REFUSED: Final = "binary frame refused: MCP messages travel as JSON in text frames"

# A close frame's payload is at most 125 bytes: a 2-byte code and the reason (RFC 6455 5.5).
_MAX_REASON_BYTES = 123


class CloseCode(enum.IntEnum):
    """The RFC 6455 section 7.4.1 close codes this transport sends or reports."""

    NORMAL_CLOSURE = 1000
    GOING_AWAY = 1001
    PROTOCOL_ERROR = 1002
    UNSUPPORTED_DATA = 1003
    NO_STATUS_RCVD = 1005
    ABNORMAL_CLOSURE = 1006
    INVALID_FRAME_PAYLOAD_DATA = 1007
    POLICY_VIOLATION = 1008
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    TRY_AGAIN_LATER = 1013


def describe_close(code: int | None, reason: str | None) -> str:
    """Return ``code`` and ``reason`` in words, e.g. ``1009 MESSAGE_TOO_BIG (too big)``."""
    if code is None:
        return "no close frame"
    try:
        text = f"{code} {CloseCode(code).name}"
    except ValueError:
        text = str(code)
    return f"{text} ({reason})" if reason else text


def close_reason(text: str) -> str:
    """Cut ``text`` to what fits in a close frame (123 UTF-8 bytes), at a character boundary."""
    data = text.encode()
    if len(data) <= _MAX_REASON_BYTES:
        return text
    return data[:_MAX_REASON_BYTES].decode(errors="ignore")


_CLEAN: Final = frozenset({CloseCode.NORMAL_CLOSURE, CloseCode.GOING_AWAY})


def end_of_stream(
    code: int | None,
    reason: str | None,
    *,
    closed_here: bool,
    clean: frozenset[int] = _CLEAN,
) -> TransportClosed | TransportBroken:
    """Return the error a stream raises once its connection is over.

    ``closed_here``: this side's ``aclose`` ended it, which is always ``TransportClosed``.
    Otherwise a peer's code in ``clean`` (1000 and 1001) is a clean end, ``TransportClosed``,
    and everything else a broken connection, ``TransportBroken``.
    """
    if closed_here:
        return TransportClosed("the WebSocket stream is closed")
    words = describe_close(code, reason)
    if code in clean:
        return TransportClosed(f"the peer closed the WebSocket: {words}")
    return TransportBroken(f"the WebSocket connection ended: {words}")


def message_from_text(text: str, limit: int) -> bytes | MessageTooLarge:
    """Return the message in one text frame, or the error if it is over ``limit`` bytes.

    A text of more than ``limit`` characters is too large without encoding it (each
    character takes at least one byte); its error gives the character count as the size,
    which ``MessageTooLarge`` reports as "at least". Lone surrogates, which no UTF-8 decoder
    produces, pass through as bytes for the protocol layer to refuse.
    """
    if len(text) > limit:
        return MessageTooLarge(len(text), limit)
    data = text.encode(errors="surrogatepass")
    if len(data) > limit:
        return MessageTooLarge(len(data), limit)
    return data


def texts_from_messages(messages: Sequence[bytes]) -> list[str]:
    """Return each message as the text of its frame.

    Raises:
        LocalProtocolError: a message is not UTF-8 (nothing should be sent).
    """
    try:
        return [bytes(message).decode() for message in messages]
    except UnicodeDecodeError as exc:
        raise LocalProtocolError(
            "a WebSocket message must be UTF-8 text: MCP over WebSocket sends JSON-RPC in "
            f"text frames ({exc.reason} at byte {exc.start})"
        ) from None


def check_handshake(
    policy: OriginPolicy,
    headers: Iterable[tuple[bytes, bytes]],
    subprotocols: Sequence[str],
) -> HeaderProblem | None:
    """Return why an opening handshake is refused, or ``None`` to accept it with ``mcp``.

    Checks, in order: Host and Origin (``OriginPolicy``), then the offered subprotocols.
    """
    problem = check_headers(policy, headers)
    if problem is not None:
        return problem
    if SUBPROTOCOL in subprotocols:
        return None
    offered = ", ".join(repr(name) for name in subprotocols) or "none"
    return HeaderProblem(
        status=400,
        header="Sec-WebSocket-Protocol",
        value=", ".join(subprotocols) or None,
        message=(
            f"MCP over WebSocket needs the subprotocol {SUBPROTOCOL!r} "
            f"(send Sec-WebSocket-Protocol: {SUBPROTOCOL}); offered: {offered}"
        ),
    )
