"""Authorization of MCP over WebSocket at ``HttpOptions.websocket_path``.

The token comes once, in the ``Authorization`` header of the upgrade request, which
``refuse_upgrade`` answers with the same status and challenge as an HTTP request when it
fails (or with a 1008 close where the server cannot answer a handshake with a status). A
connection then carries many requests and no more headers, so ``AuthorizedStream`` keeps
the rules the HTTP endpoint keeps per request:

* input waits until the session's identity is bound (``ready``), so no request runs
  before the session knows whom it serves;
* a request whose target needs scopes the token lacks (``ScopeRules``) never reaches the
  session: it is answered here with a JSON-RPC error (there is no HTTP status to give), its
  ``data`` holding the status and ``WWW-Authenticate`` challenge an HTTP POST would get;
* once the token expires the connection is closed with 1008, at the next message.

Every send goes through one lock: the session's writer and the answers given here share
the connection.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING

import orjson
import trio

from trimcp.errors import TransportClosed
from trimcp.http._body import read_post_body
from trimcp.http._checks import HttpRefusal
from trimcp.transports import CloseCode

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.auth import Identity
    from trimcp.errors import MessageTooLarge
    from trimcp.http._asgi import Receive, Scope, Send
    from trimcp.http._auth import EndpointAuth, SessionOwner
    from trimcp.http._body import PostBody
    from trimcp.transports import AsgiWebSocketStream

__all__ = ["AuthorizedStream", "refuse_upgrade"]

# A close reason holds 123 bytes (RFC 6455 section 5.5); the words are cut to fit.
_MAX_REASON = 120
_EXPIRED = "the access token expired; reconnect with a new token"


async def refuse_upgrade(scope: Scope, receive: Receive, send: Send, refusal: HttpRefusal) -> None:
    """Answer a WebSocket handshake with ``refusal`` (its status and challenge) instead."""
    if (await receive()).get("type") != "websocket.connect":
        return
    if "websocket.http.response" not in (scope.get("extensions") or {}):
        reason = refusal.message.encode()[:_MAX_REASON].decode("utf-8", "ignore")
        await send(
            {"type": "websocket.close", "code": CloseCode.POLICY_VIOLATION, "reason": reason}
        )
        return
    body = refusal.body()
    headers = [
        *refusal.headers,
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
    ]
    await send(
        {"type": "websocket.http.response.start", "status": refusal.status, "headers": headers}
    )
    await send({"type": "websocket.http.response.body", "body": body})


@typing.final
class AuthorizedStream:
    """The ``MessageStream`` of an authorized WebSocket session (see the module docstring)."""

    __slots__ = ("_auth", "_identity", "_lock", "_stream", "owner", "ready")

    def __init__(self, stream: AsgiWebSocketStream, auth: EndpointAuth, identity: Identity) -> None:
        self._stream = stream
        self._auth = auth
        self._identity = identity
        self._lock = trio.Lock()
        #: Set once the session's identity is bound; input waits for it.
        self.ready = trio.Event()
        #: Keeps the session's identity binding alive (``EndpointAuth.bind``).
        self.owner: SessionOwner | None = None

    @property
    def wrapped(self) -> AsgiWebSocketStream:
        """The WebSocket it checks (``trimcp.transports.WrappingStream``)."""
        return self._stream

    async def receive_message(self) -> bytes:
        """Return the next message the token allows; answer the others here.

        Raises:
            TransportClosed: the token expired (the connection is closed with 1008), or
                the stream was closed.
            TransportBroken, MessageTooLarge: as the WebSocket stream raises them.
        """
        await self.ready.wait()
        while True:
            data = await self._stream.receive_message()
            if self._auth.server.expired(self._identity):
                await self._stream.aclose(code=CloseCode.POLICY_VIOLATION, reason=_EXPIRED)
                raise TransportClosed(_EXPIRED)
            refusal = self._refusal(data)
            if refusal is None:
                return data
            if refusal:  # b"": notifications only, which get no answer
                await self.send_message(refusal)

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return ``[]``: the ASGI WebSocket stream hands over one message per receive."""
        return []

    async def send_message(self, data: bytes) -> None:
        """Send one message (under the connection's send lock)."""
        async with self._lock:
            await self._stream.send_message(data)

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """Send messages in order (under the connection's send lock)."""
        async with self._lock:
            await self._stream.send_messages(messages)

    async def aclose(self) -> None:
        """Close the WebSocket."""
        await self._stream.aclose()

    def _refusal(self, data: bytes) -> bytes | None:
        """Return the answer refusing ``data`` for lack of scope, or None to pass it on.

        What is not a well-formed body is passed on: the session answers it as it would.
        """
        try:
            outline = read_post_body(data)
        except HttpRefusal:
            return None
        if not outline.operations:
            return None
        try:
            self._auth.authorize(self._identity, outline.operations)
        except HttpRefusal as refusal:
            return _error_answers(outline, refusal)
        return None


def _error_answers(outline: PostBody, refusal: HttpRefusal) -> bytes:
    """Return the JSON-RPC error answering every request of ``outline`` with ``refusal``."""
    challenge = dict(refusal.headers).get(b"www-authenticate", b"").decode("latin-1")
    data = {"status": refusal.status, "www_authenticate": challenge}
    errors = [
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": refusal.code, "message": refusal.message, "data": data},
        }
        for request_id in outline.request_ids
    ]
    if outline.batch:
        return orjson.dumps(errors)
    return orjson.dumps(errors[0]) if errors else b""
