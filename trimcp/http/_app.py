"""The MCP endpoint as a thin ASGI callable (trimcp's HTTP/1.1 server or hypercorn runs it).

``McpHttpApp`` answers POST, GET and DELETE on ``HttpOptions.path`` per MCP 2025-11-25,
Transports > Streamable HTTP (link below), and MCP over WebSocket on
``HttpOptions.websocket_path``. It stays a plain ASGI callable rather than a framework route:
every layer between the HTTP server and the session shows in the throughput (bench/RESULTS.md,
time by layer).

Order of checks for every request, so a refused request never creates a session or touches
one: path (404), Host/Origin (421/403, DNS-rebinding protection), authorization with
``HttpOptions.auth`` (400/401/403/503 with a ``WWW-Authenticate`` challenge, ``_auth.py``),
method (405), headers (406/415), body size (413), body outline (400), the scopes of what the
body asks for (403), shutting down (503), session id (400/404; ``initialize`` on an existing
session is 400; another principal's session is 404), protocol version (400), a batch outside
2025-03-26 (400). Once the body parsed, the JSON-RPC error of a refusal carries the id of the
request it refuses. With ``auth`` the RFC 9728 metadata is served (GET) at its well-known
paths, after the Host/Origin check and without a token; the WebSocket upgrade is authorized
the same way (``_websocket_auth.py``).

Graceful stop (``trimcp.supervision.Drain``): while the server drains, a POST that carries a
request (``initialize`` included, and every stateless POST) and a GET that opens a new
stream are refused with 503, ``Retry-After`` and the JSON-RPC -32000 "shutting down" error;
a POST of notifications or responses still passes (a client cancels a request in flight, or
answers the server's own request, that way), as does a GET resuming a stream with
``Last-Event-ID`` and a DELETE. Every POST counts as work in flight (``Drain.track``) until
its answer has been sent, so the drain waits for the answers of the requests it lets finish.

Here: the routing and the session endpoint (a session's POSTs, its GET stream, DELETE,
``initialize``). Beside it: ``_stateless.py`` (``HttpOptions.stateless``: a session per POST),
``_legacy.py`` (the 2024-11-05 HTTP+SSE transport's two routes), ``_websocket_route.py``
(MCP over WebSocket), ``_auth.py`` and ``_websocket_auth.py`` (authorization),
``_sse_writer.py`` (writing an SSE answer), ``_session_io.py`` (starting a session, with the
one 503 when none can start; feeding it; collecting a JSON answer) and ``_asgi.py`` (request
bodies and fixed answers).

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http
"""

from __future__ import annotations

import logging
import sys
import typing
from typing import TYPE_CHECKING

import orjson

from trimcp.errors import EventsLost, UnknownEventId
from trimcp.http._asgi import read_body, refuse, send_fixed, send_json, send_plain
from trimcp.http._auth import EndpointAuth, unknown_session
from trimcp.http._body import read_post_body
from trimcp.http._checks import (
    Headers,
    HttpRefusal,
    check_accept_for_get,
    check_accept_for_post,
    check_content_type,
    check_protocol_version,
    check_session_id,
    new_session_id,
)
from trimcp.http._legacy import LegacyEndpoint
from trimcp.http._modern import ModernEndpoint
from trimcp.http._session_io import (
    collect,
    exchange,
    feed,
    shutting_down_refusal,
    start_session,
)
from trimcp.http._sse_writer import SseWriter
from trimcp.http._stateless import answer_initialize, initialize_quietly, open_stateless_session
from trimcp.http._stream import HttpSessionStream, peek_id
from trimcp.http._websocket_route import WebSocketRoute
from trimcp.protocol import (
    DEFAULT_MAX_MESSAGE_SIZE,
    Era,
    choose_era,
    features,
    is_handshake_version,
)
from trimcp.supervision import current_drain
from trimcp.transports import (
    OriginPolicy,
    check_headers,
    encode_event,
)

if TYPE_CHECKING:
    from trimcp.auth import Identity
    from trimcp.http._asgi import Receive, Scope, Send
    from trimcp.http._body import PostBody
    from trimcp.http._live import LiveQueue
    from trimcp.http._options import HttpOptions
    from trimcp.sessions import SessionManager, SessionRecord
    from trimcp.transports import EventStore

__all__ = ["McpHttpApp"]

logger = logging.getLogger(__name__)

_SESSION_HEADER = b"mcp-session-id"


@typing.final
class McpHttpApp:
    """The ASGI application of one MCP server's HTTP listener."""

    def __init__(
        self,
        manager: SessionManager,
        options: HttpOptions,
        store: EventStore | None,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self._manager = manager
        self._table = manager.table
        self._options = options
        self._store = store
        self._policy = OriginPolicy(
            allowed_hosts=options.allowed_hosts,
            allowed_origins=options.allowed_origins,
            hosts_setting="http.allowed_hosts",
            origins_setting="http.allowed_origins",
        )
        self._max_message_size = max_message_size
        self._sse = SseWriter(options)
        auth = options.auth
        self._auth = None if auth is None else EndpointAuth(auth, options.path)
        self._legacy = LegacyEndpoint(manager, options, self._auth) if options.legacy_sse else None
        self._websocket = WebSocketRoute(manager, self._policy, self._auth, max_message_size)
        self._modern = ModernEndpoint(manager.handler, options, manager.session_options)
        # The drain of the application this endpoint runs in (None: no graceful stop).
        self._drain = current_drain()

    @property
    def per_request_in_flight(self) -> int:
        """The 2026-07-28 requests being served now (each its own POST, in no session)."""
        return self._modern.in_flight

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            if scope["path"] == self._options.websocket_path:
                await self._websocket(scope, receive, send)
            else:
                await send({"type": "websocket.close", "code": 1008})
        elif kind == "lifespan":
            await _lifespan(receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        legacy = self._legacy if self._legacy is not None and self._legacy.serves(path) else None
        auth = self._auth
        metadata = auth is not None and path in auth.metadata_paths
        if path != self._options.path and legacy is None and not metadata:
            await send_plain(
                send, 404, b"Not Found: the MCP endpoint is " + self._options.path.encode()
            )
            return
        problem = check_headers(self._policy, scope["headers"])
        if problem is not None:
            logger.warning("refused an HTTP request: %s", problem.message)
            await refuse(send, HttpRefusal(problem.status, problem.message))
            return
        try:
            if auth is not None and metadata:
                await auth.metadata(scope, send)
                return
            identity = None if auth is None else await auth.authenticate(scope)
            if legacy is not None:
                await legacy(scope, Headers(scope["headers"]), receive, send, identity)
                return
            await self._route(scope, receive, send, identity)
        except HttpRefusal as refusal:
            await refuse(send, refusal)

    async def _route(
        self, scope: Scope, receive: Receive, send: Send, identity: Identity | None
    ) -> None:
        """Serve an authorized request to the MCP endpoint by its method.

        Raises:
            HttpRefusal: the request is refused (the caller answers with it).
        """
        method = scope["method"]
        headers = Headers(scope["headers"])
        version = headers.get("mcp-protocol-version")
        if (
            method in ("GET", "DELETE")
            and version is not None
            and not is_handshake_version(version)
        ):
            raise HttpRefusal(
                405,
                f"Method Not Allowed: protocol {version} has no sessions, so no {method}; "
                "send each request as a POST (subscriptions/listen for notifications)",
                headers=((b"allow", b"POST"),),
            )
        if self._options.stateless and method in ("GET", "DELETE"):
            raise HttpRefusal(
                405,
                f"Method Not Allowed: this endpoint is stateless (http.stateless = true): "
                f"no sessions, so no {method}; send each request as a POST",
                headers=((b"allow", b"POST"),),
            )
        if method == "POST":
            await self._post(headers, receive, send, identity)
        elif method == "GET":
            await self._get(headers, receive, send, identity)
        elif method == "DELETE":
            await self._delete(headers, send, identity)
        else:
            raise HttpRefusal(
                405,
                f"Method Not Allowed: the MCP endpoint takes POST, GET and DELETE, not {method}",
                headers=((b"allow", b"GET, POST, DELETE"),),
            )

    # --- POST ------------------------------------------------------------------------------

    async def _post(
        self, headers: Headers, receive: Receive, send: Send, identity: Identity | None
    ) -> None:
        check_accept_for_post(headers.get("accept"))
        check_content_type(headers.get("content-type"))
        body = await read_body(headers, receive, self._options.max_body_size)
        outline = read_post_body(body)
        drain = self._drain
        try:
            if self._auth is not None and identity is not None:
                self._auth.authorize(identity, outline.operations)
            if drain is None:
                await self._post_outlined(headers, outline, receive, send, identity)
                return
            if drain.draining and (outline.request_ids or outline.initialize):
                raise shutting_down_refusal()
            with drain.track():
                await self._post_outlined(headers, outline, receive, send, identity)
        except HttpRefusal as refusal:
            # The body parsed, so a refusal answers its request: JSON-RPC 2.0 (section 5)
            # leaves an error's id null only when it could not be found.
            refusal.answers(outline.request_id)
            raise

    async def _post_outlined(
        self,
        headers: Headers,
        outline: PostBody,
        receive: Receive,
        send: Send,
        identity: Identity | None,
    ) -> None:
        message = outline.message
        first = message if isinstance(message, dict) else {}
        method = first.get("method")
        era = choose_era(
            headers.get("mcp-protocol-version"),
            method if isinstance(method, str) else "",
            first.get("params"),
        )
        if era is Era.MODERN:
            await self._modern.post(headers, outline, receive, send, identity)
            return
        if self._options.stateless:
            await self._stateless(headers, outline, receive, send, identity)
            return
        if outline.initialize:
            if headers.get("mcp-session-id") is not None:
                # 400 if malformed, 404 if unknown or another's: as for any request.
                self._session(headers, identity)
                raise HttpRefusal(
                    400,
                    "Bad Request: this session is already initialized; initialize comes once "
                    "per session. To start a new session, send initialize without an "
                    "MCP-Session-Id header",
                )
            await self._initialize(outline, send, identity)
            return
        record = self._session(headers, identity)
        stream = typing.cast("HttpSessionStream", record.stream)
        await self._serve_post(headers, stream, outline, receive, send)

    async def _serve_post(
        self,
        headers: Headers,
        stream: HttpSessionStream,
        outline: PostBody,
        receive: Receive,
        send: Send,
    ) -> None:
        body = outline.raw
        version = check_protocol_version(
            headers.get("mcp-protocol-version"), stream.protocol_version
        )
        negotiated = stream.protocol_version or version
        if outline.batch and not features(negotiated).batching:
            raise HttpRefusal(
                400,
                f"Invalid Request: JSON-RPC batching (an array of messages in one body) is not "
                f"part of protocol version {negotiated}, only of 2025-03-26; send each message "
                "in a POST of its own",
            )
        if not outline.request_ids:
            await feed(stream, body)
            await send_fixed(send, 202, b"", [])
            return
        for request_id in outline.request_ids:
            if stream.in_flight(request_id):
                raise HttpRefusal(
                    400,
                    f"Invalid Request: request id {request_id!r} is already in flight in this "
                    "session; use a new id",
                )
        json_response = self._options.json_response
        response = await stream.open_post(outline.request_ids, resumable=not json_response)
        live = response.attach(sse=not json_response)
        head = b""
        if not self._options.json_response:
            # The priming event is stored before the session sees the body, so its id comes
            # before every id of the answer: resuming from it loses nothing.
            head = await self._sse.priming(response, negotiated)
        try:
            await feed(stream, body)
        except HttpRefusal:
            stream.forget_requests(outline.request_ids)
            raise
        if self._options.json_response:
            await self._answer_json(live, outline.batch, send, extra=[])
        else:
            await self._sse.stream(response, live, receive, send, head)

    async def _stateless(
        self,
        headers: Headers,
        outline: PostBody,
        receive: Receive,
        send: Send,
        identity: Identity | None,
    ) -> None:
        """Serve one POST on a session of its own (``HttpOptions.stateless``, ``_stateless``)."""
        async with open_stateless_session(self._manager) as (record, stream):
            self._bind(record, stream, identity)
            if outline.initialize:
                await answer_initialize(stream, outline, send)
                return
            version = check_protocol_version(headers.get("mcp-protocol-version"), None)
            await initialize_quietly(stream, version)
            await self._serve_post(headers, stream, outline, receive, send)

    async def _initialize(self, outline: PostBody, send: Send, identity: Identity | None) -> None:
        session_id = new_session_id()
        stream = HttpSessionStream(session_id, self._store)
        record = await start_session(self._manager, session_id, stream)
        self._bind(record, stream, identity)
        answers = await exchange(stream, outline.request_ids, outline.raw)
        result = orjson.loads(answers[0]) if answers else None
        extra: list[tuple[bytes, bytes]] = []
        if not isinstance(result, dict) or not isinstance(result.get("result"), dict):
            # A refused initialize leaves no session behind.
            await self._manager.end_session(session_id, "initialize failed")
        else:
            version = result["result"].get("protocolVersion")
            # Interned: a handful of versions exist, and each idle session holds one.
            stream.protocol_version = sys.intern(version) if isinstance(version, str) else None
            extra.append((_SESSION_HEADER, session_id.encode("ascii")))
        await send_json(send, answers[0] if answers else b"", extra)

    def _bind(
        self, record: SessionRecord, stream: HttpSessionStream, identity: Identity | None
    ) -> None:
        """Bind a session just started to the principal whose request started it."""
        if self._auth is not None and identity is not None:
            stream.owner = self._auth.bind(record.ref, identity)

    def _session(self, headers: Headers, identity: Identity | None) -> SessionRecord:
        """Return the session the request names, if it exists and ``identity`` holds it.

        Raises:
            HttpRefusal: 400, a malformed id; 404, unknown, ended, or another principal's.
        """
        session_id = check_session_id(headers.get("mcp-session-id"))
        record = self._table.lookup(session_id)
        stream = None if record is None else typing.cast("HttpSessionStream", record.stream)
        if record is None or stream is None or stream.closed:
            raise unknown_session()
        if self._auth is not None and not self._auth.holds(stream.owner, identity):
            raise unknown_session()
        return record

    async def _answer_json(
        self,
        live: LiveQueue,
        batch: bool,
        send: Send,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        answers = [data for data in await collect(live) if peek_id(data)[1]]
        body = b"[" + b",".join(answers) + b"]" if batch else (answers[0] if answers else b"")
        await send_json(send, body, extra)

    # --- GET -------------------------------------------------------------------------------

    async def _get(
        self, headers: Headers, receive: Receive, send: Send, identity: Identity | None
    ) -> None:
        check_accept_for_get(headers.get("accept"))
        record = self._session(headers, identity)
        stream = typing.cast("HttpSessionStream", record.stream)
        version = check_protocol_version(
            headers.get("mcp-protocol-version"), stream.protocol_version
        )
        last_event_id = headers.get("last-event-id")
        if last_event_id is not None:
            try:
                target, replay, live = await stream.resume(last_event_id)
            except UnknownEventId as exc:
                raise HttpRefusal(400, f"Bad Request: {exc}") from None
            except EventsLost as exc:
                raise HttpRefusal(410, f"Gone: {exc}") from None
            head = b"".join(encode_event(data, event_id=event_id) for event_id, data in replay)
            await self._sse.stream(target, live, receive, send, head)
            return
        if self._drain is not None and self._drain.draining:
            raise shutting_down_refusal()
        if stream.standalone is not None and stream.standalone.attached:
            raise HttpRefusal(
                409,
                "Conflict: this session already has an open GET stream; one per session",
            )
        standalone = await stream.open_standalone()
        head = await self._sse.priming(standalone, stream.protocol_version or version)
        live = standalone.attach()
        await self._sse.stream(standalone, live, receive, send, head)

    # --- DELETE ----------------------------------------------------------------------------

    async def _delete(self, headers: Headers, send: Send, identity: Identity | None) -> None:
        session_id = check_session_id(headers.get("mcp-session-id"))
        if self._auth is not None:
            self._session(headers, identity)  # only its holder may end it
        if not await self._manager.end_session(session_id, "deleted by the client"):
            raise HttpRefusal(404, "Not Found: unknown or expired session")
        await send_fixed(send, 200, b"", [])


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
