"""The 2024-11-05 HTTP+SSE transport, for old clients (off by default: ``legacy_sse``).

MCP 2024-11-05, Transports > HTTP with SSE (link below): the client GETs the SSE endpoint
and keeps it open; the server's first event is ``endpoint``, whose data is the URL to POST
messages to; every server message then arrives as a ``message`` event on that one
stream, and every POST is answered 202 Accepted. A session lives exactly as long as its SSE
connection, so it is never expired or evicted while connected.

``LegacyEndpoint`` answers the transport's two routes (``HttpOptions.legacy_sse_path`` and
``legacy_messages_path``); ``McpHttpApp`` hands it their requests once the Host/Origin check
and, with ``HttpOptions.auth``, the bearer token passed. The session the SSE GET starts is
bound to the principal of its token; a POST to it with another principal's token gets the
404 of an unknown session, and one asking for a tool (resource, prompt) whose scopes the
token lacks gets 403. ``LegacySseStream`` is the ``MessageStream`` each of its sessions runs on.

Spec: https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse
"""

from __future__ import annotations

import contextlib
import typing
import urllib.parse
from typing import TYPE_CHECKING

import trio

from trimcp.errors import TransportClosed
from trimcp.http._asgi import chunk, read_body, send_fixed
from trimcp.http._body import read_post_body
from trimcp.http._checks import (
    HttpRefusal,
    check_accept_for_get,
    check_content_type,
    check_session_id,
    new_session_id,
)
from trimcp.http._session_io import start_session
from trimcp.http._sse_writer import SSE_HEADERS
from trimcp.http._stream import ready_now
from trimcp.transports import encode_event

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.auth import Identity
    from trimcp.errors import MessageTooLarge
    from trimcp.http._asgi import Receive, Scope, Send
    from trimcp.http._auth import EndpointAuth, SessionOwner
    from trimcp.http._checks import Headers
    from trimcp.http._options import HttpOptions
    from trimcp.sessions import SessionManager

__all__ = ["LegacyEndpoint", "LegacySseStream"]

# Messages queued for a slow SSE reader before the session waits for it.
_QUEUE = 64


@typing.final
class LegacyEndpoint:
    """The two routes of the 2024-11-05 transport: the SSE stream and the messages URL."""

    __slots__ = ("_auth", "_manager", "_options")

    def __init__(
        self, manager: SessionManager, options: HttpOptions, auth: EndpointAuth | None = None
    ) -> None:
        self._manager = manager
        self._options = options
        self._auth = auth

    def serves(self, path: str) -> bool:
        """Tell whether ``path`` is one of the transport's routes."""
        return path in (self._options.legacy_sse_path, self._options.legacy_messages_path)

    async def __call__(
        self,
        scope: Scope,
        headers: Headers,
        receive: Receive,
        send: Send,
        identity: Identity | None = None,
    ) -> None:
        """Answer one request to either route; ``identity`` is its token's, with auth.

        Raises:
            HttpRefusal: the request is refused (the caller sends the refusal); 503 when
                the SSE GET finds every session busy.
        """
        method = scope["method"]
        if scope["path"] == self._options.legacy_sse_path:
            if method != "GET":
                raise HttpRefusal(
                    405, "Method Not Allowed: GET the SSE endpoint", headers=((b"allow", b"GET"),)
                )
            await self._open_stream(headers, receive, send, identity)
            return
        if method != "POST":
            raise HttpRefusal(
                405, "Method Not Allowed: POST messages here", headers=((b"allow", b"POST"),)
            )
        await self._post_message(scope, headers, receive, send, identity)

    async def _post_message(
        self,
        scope: Scope,
        headers: Headers,
        receive: Receive,
        send: Send,
        identity: Identity | None,
    ) -> None:
        check_content_type(headers.get("content-type"))
        query = urllib.parse.parse_qs(scope.get("query_string", b"").decode("latin-1"))
        session_id = check_session_id((query.get("session_id") or [None])[0])
        record = self._manager.table.lookup(session_id)
        unknown = HttpRefusal(404, "Not Found: unknown session; open the SSE endpoint again")
        if record is None or not isinstance(record.stream, LegacySseStream):
            raise unknown
        auth = self._auth
        if auth is not None and not auth.holds(record.stream.owner, identity):
            raise unknown
        body = await read_body(headers, receive, self._options.max_body_size)
        outline = read_post_body(body)  # refuse what cannot be JSON-RPC here, with its 400
        if auth is not None and identity is not None:
            auth.authorize(identity, outline.operations)
        try:
            await record.stream.feed(body)
        except TransportClosed:
            raise HttpRefusal(404, "Not Found: the session has ended") from None
        await send_fixed(send, 202, b"Accepted", [])

    async def _open_stream(
        self, headers: Headers, receive: Receive, send: Send, identity: Identity | None
    ) -> None:
        """Start a session and stream its messages until either side ends it."""
        check_accept_for_get(headers.get("accept"))
        session_id = new_session_id()
        stream = LegacySseStream(session_id)
        record = await start_session(self._manager, session_id, stream)
        if self._auth is not None and identity is not None:
            stream.owner = self._auth.bind(record.ref, identity)
        endpoint = f"{self._options.legacy_messages_path}?session_id={session_id}"
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        await send(chunk(encode_event(endpoint.encode(), event="endpoint")))
        try:
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    nursery.cancel_scope.cancel()

                nursery.start_soon(watch)
                async with contextlib.aclosing(stream.events()) as events:
                    async for event in events:
                        await send(chunk(event))
                nursery.cancel_scope.cancel()
        finally:
            # The session lives as long as this connection, however the connection ended
            # (a cancellation included).
            with trio.CancelScope(shield=True):
                await self._manager.end_session(session_id, "SSE connection closed")


@typing.final
class LegacySseStream:
    """The ``MessageStream`` of one legacy session: POST bodies in, one SSE stream out."""

    __slots__ = ("_in_receive", "_in_send", "_out_receive", "_out_send", "owner", "session_id")

    busy = True  # connection-bound: ends with its SSE connection

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        #: Who started the session, with ``HttpOptions.auth`` (None without authorization).
        self.owner: SessionOwner | None = None
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
