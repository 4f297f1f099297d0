"""A small HTTP/1.1 server on trio that runs one ASGI application: the MCP endpoint's own.

Why not hypercorn on the hot path: its trio worker spends ~1,000 µs of CPU on a request to
a do-nothing app here, and four times a trio + h11 loop's cost (bench/RESULTS.md). MCP over
Streamable HTTP needs little of what it offers: HTTP/1.1 with keep-alive, request bodies,
streamed (SSE) and fixed responses, noticing a client leave, and a WebSocket upgrade on the
same port. This module does exactly that, in one task per connection:

* the connection task reads a request head, parses it (``_h1_parse.py``), and runs the
  application inline — no task per request, no reader task beside it;
* ``receive`` hands out the body from what was already read (a small POST arrives in the
  same read as its head), then, if the application waits for ``http.disconnect`` while its
  response streams, reads the socket until the client closes it; that wait ends as soon as
  the response is complete, and anything read meanwhile (a pipelined request) is kept;
* ``send`` holds ``http.response.start`` back and writes it together with the first body
  part: a response known in full leaves in one write with ``Content-Length``; a streamed
  one is chunked, each part one write;
* a request with ``Upgrade: websocket`` is handed with the bytes already read to
  trio-websocket, and the application gets an ASGI ``websocket`` scope (``_h1_websocket.py``).

What the application sees is plain ASGI 3 (``http`` and ``websocket`` scopes, no lifespan:
the application's life is its supervisor's business). Limits and the refusals of malformed
requests (400 / 431 / 501 / 505, then the connection is closed) are in ``_h1_parse.py``.
Slow and greedy clients are bounded (``H1Settings``): a connection idle past
``keep_alive_timeout`` is closed; a whole head must arrive within ``head_timeout`` and a
whole body within ``body_timeout`` plus its size at ``min_body_rate`` (else 408), however
the bytes trickle in; at ``max_connections`` the connection idle the longest gives way to a
newcomer, and with none idle the newcomer is closed at once. HTTP/1.0 clients get no
chunked coding (a streamed body ends with the connection) and keep-alive only when they ask.
``serve_h1`` stops gracefully: it stops accepting, closes idle connections at once, and
gives requests in progress ``graceful_timeout`` seconds.
"""

from __future__ import annotations

import email.utils
import http
import logging
import math
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Final, final

import trio

from trimcp.http._h1_parse import (
    BARE_LF,
    MAX_HEAD_SIZE,
    ChunkedDecoder,
    HeadRejected,
    parse_head,
)
from trimcp.http._h1_websocket import serve_websocket_upgrade

if TYPE_CHECKING:
    from trimcp.http._h1_parse import RequestHead

__all__ = ["H1Settings", "serve_h1"]

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_ASGI: Final = {"version": "3.0", "spec_version": "2.3"}
_DISCONNECT: Final = {"type": "http.disconnect"}
_READ_SIZE: Final = 65536
#: Bytes read ahead while a response streams (a pipelined request) before reading pauses.
_READ_AHEAD: Final = 2 * _READ_SIZE
_SERVER: Final = b"server: trimcp\r\n"
_CONTINUE: Final = b"HTTP/1.1 100 Continue\r\n\r\n"
_GONE: Final = (trio.BrokenResourceError, trio.ClosedResourceError)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class H1Settings:
    """How ``serve_h1`` treats connections.

    Attributes:
        keep_alive_timeout: seconds an idle connection is kept for its next request (and a
            new one for its first byte).
        head_timeout: seconds a whole request head may take to arrive, from its first byte;
            a slower one gets 408 and the connection is closed.
        body_timeout / min_body_rate: a request body must arrive within ``body_timeout``
            seconds plus one second per ``min_body_rate`` bytes of it (its Content-Length,
            or the chunked bytes received so far); a slower one gets 408.
        max_body_size: bytes a chunked request body may take on the wire, its framing and
            trailers included (413 past it); ``None``: no limit here. The application checks
            the decoded size itself.
        max_connections: open connections at most; at the limit a new connection takes the
            place of the connection idle the longest, or is closed at once if none is idle.
        graceful_timeout: seconds requests in progress get to finish when the server stops.
        max_message_size: bytes a WebSocket message may have.
    """

    keep_alive_timeout: float = 30.0
    head_timeout: float = 10.0
    body_timeout: float = 30.0
    min_body_rate: int = 64 * 1024
    max_body_size: int | None = None
    max_connections: int = 1024
    graceful_timeout: float = 1.0
    max_message_size: int = 4 * 1024 * 1024

    def __post_init__(self) -> None:
        for name in ("keep_alive_timeout", "head_timeout", "body_timeout", "min_body_rate"):
            if not getattr(self, name) > 0:
                raise ValueError(f"H1Settings.{name} must be positive")
        if self.max_connections < 1:
            raise ValueError("H1Settings.max_connections must be at least 1")


class _Clock:
    """The ``Date`` header, formatted once a second instead of once a response."""

    __slots__ = ("_line", "_second")

    def __init__(self) -> None:
        self._second = -1
        self._line = b""

    def date_line(self) -> bytes:
        now = int(time.time())
        if now != self._second:
            self._second = now
            self._line = b"date: " + email.utils.formatdate(now, usegmt=True).encode() + b"\r\n"
        return self._line


_CLOCK = _Clock()
_STATUS_LINES: dict[int, bytes] = {}


def _status_line(status: int) -> bytes:
    line = _STATUS_LINES.get(status)
    if line is None:
        try:
            phrase = http.HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        line = b"HTTP/1.1 %d %s\r\n" % (status, phrase.encode("ascii"))
        if len(_STATUS_LINES) < 128:
            _STATUS_LINES[status] = line
    return line


def _plain_response(status: int, text: str) -> bytes:
    body = text.encode("utf-8") + b"\n"
    return b"".join(
        (
            _status_line(status),
            b"content-type: text/plain; charset=utf-8\r\n",
            b"content-length: %d\r\n" % len(body),
            b"connection: close\r\n",
            _SERVER,
            _CLOCK.date_line(),
            b"\r\n",
            body,
        )
    )


@final
class _Server:
    """What the connections of one ``serve_h1`` share: the app, settings and shutdown."""

    __slots__ = ("active", "app", "closing", "drained", "idle", "refused", "settings")

    def __init__(self, app: App, settings: H1Settings) -> None:
        self.app = app
        self.settings = settings
        self.closing = False
        self.active = 0
        self.drained = trio.Event()
        # Connections waiting for their next request, the longest idle first (a dict keeps
        # insertion order): cancelled at once on shutdown, and the first to make room when
        # the connection limit is reached.
        self.idle: dict[trio.CancelScope, None] = {}
        # New connections closed at the limit since it was last logged (None: not at it).
        self.refused: int | None = None

    def admit(self) -> bool:
        """Whether a new connection may be served (see ``H1Settings.max_connections``)."""
        limit = self.settings.max_connections
        if self.active < limit:
            if self.refused is not None:
                logger.warning(
                    "accepting HTTP connections again; %d were closed at the limit of %d",
                    self.refused,
                    limit,
                )
                self.refused = None
            return True
        if self.idle:
            # The connection idle the longest gives way: it loses nothing but a kept-alive
            # socket, while the newcomer may carry a request.
            oldest = next(iter(self.idle))
            del self.idle[oldest]
            oldest.cancel()
            return True
        if self.refused is None:
            logger.warning(
                "%d HTTP connections are open (http.max_connections) and none is idle: new "
                "connections are closed at once until one ends",
                limit,
            )
            self.refused = 0
        self.refused += 1
        return False

    def shut_down(self) -> None:
        self.closing = True
        for scope in self.idle:
            scope.cancel()
        if not self.active:
            self.drained.set()

    def connection_ended(self) -> None:
        self.active -= 1
        if self.closing and not self.active:
            self.drained.set()


@final
class _Connection:
    """One TCP connection: its stream, what was read and not used yet, and its addresses."""

    __slots__ = ("broken", "buffer", "client", "eof", "server", "stream")

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.buffer = bytearray()
        self.eof = False
        self.broken = False
        self.client = _address(stream, peer=True)
        self.server = _address(stream, peer=False)

    async def read_more(self) -> bool:
        """Read once into ``buffer``; return False at end of input or a broken connection."""
        try:
            data = await self.stream.receive_some(_READ_SIZE)
        except _GONE:
            self.broken = True
            return False
        if not data:
            self.eof = True
            return False
        self.buffer += data
        return True

    async def write(self, data: bytes | bytearray) -> None:
        if self.broken:
            return
        try:
            await self.stream.send_all(data)
        except _GONE:
            self.broken = True


def _address(stream: trio.abc.Stream, *, peer: bool) -> tuple[str, int] | None:
    sock = getattr(stream, "socket", None)  # streams in tests have none
    try:
        name = sock.getpeername() if peer else sock.getsockname()  # type: ignore[union-attr]
    except (OSError, AttributeError):
        return None
    if not isinstance(name, tuple):
        return None
    return (str(name[0]), int(name[1]))


@final
class _Exchange:
    """One request and its response: the ASGI ``receive`` and ``send`` of one call."""

    __slots__ = (
        "_chunked",
        "_conn",
        "_continue",
        "_deadline_base",
        "_declared",
        "_decoder",
        "_delivered",
        "_head",
        "_head_written",
        "_left",
        "_sent",
        "_server",
        "_start",
        "_waiter",
        "_wire",
        "body_done",
        "complete",
        "keep_alive",
        "started",
    )

    def __init__(self, server: _Server, conn: _Connection, head: RequestHead) -> None:
        self._server = server
        self._conn = conn
        self._head_written = False
        self._head = head
        self._left = head.content_length or 0
        self._decoder = ChunkedDecoder() if head.content_length is None else None
        self._continue = head.expect_continue
        self.body_done = head.content_length == 0
        # Whether the app has had the request's last http.request message (ASGI gives
        # one even for an empty body); after it, receive waits for the client to leave.
        self._delivered = False
        self.keep_alive = head.keep_alive
        self.started = False
        self.complete = False
        self._start: Message | None = None
        self._chunked = False
        self._declared: int | None = None
        self._sent = 0
        self._waiter: trio.CancelScope | None = None
        # Chunked bytes taken from the wire, and when the body's deadline starts (set when
        # the body is first waited for: most bodies arrive with their head).
        self._wire = 0
        self._deadline_base: float | None = None

    # --- receive -------------------------------------------------------------------------

    async def receive(self) -> Message:
        if not self._delivered:
            message = await self._body()
            self._delivered = not message.get("more_body", True)
            return message
        if not (self.complete or self._conn.broken or self._conn.eof):
            await self._wait_disconnect()
        return dict(_DISCONNECT)

    async def _body(self) -> Message:
        conn = self._conn
        while True:
            message = self._take_body(conn.buffer)
            if message is not None:
                return message
            if self._continue:
                self._continue = False
                if not self.started:
                    await conn.write(_CONTINUE)
            if not await self._read_body_more():
                self.keep_alive = False
                return dict(_DISCONNECT)

    def _take_body(self, buffer: bytearray) -> Message | None:
        """The next ``http.request`` message from what was read, or ``None`` to read more."""
        if self._decoder is not None:
            piece, used = self._decoder.feed(buffer)
            del buffer[:used]
            self._wire += used
            limit = self._server.settings.max_body_size
            if limit is not None and self._wire > limit:
                raise HeadRejected(413, f"the chunked request body is larger than {limit} bytes")
            if not (piece or self._decoder.done):
                return None
            self.body_done = self._decoder.done
        elif buffer or not self._left:
            take = min(self._left, len(buffer))
            piece = bytes(buffer[:take])
            del buffer[:take]
            self._left -= take
            self.body_done = self._left == 0
        else:
            return None
        return {"type": "http.request", "body": piece, "more_body": not self.body_done}

    async def _read_body_more(self) -> bool:
        """Read more of the body; False when the client has gone.

        Raises:
            HeadRejected: 408, the body did not arrive in time (``H1Settings.body_timeout``).
        """
        conn = self._conn
        if conn.eof or conn.broken:
            return False
        settings = self._server.settings
        if self._deadline_base is None:
            self._deadline_base = trio.current_time() + settings.body_timeout
        # The whole body's deadline, not each read's: a client trickling a byte at a time
        # cannot hold the connection past it.
        size = max(self._wire, self._head.content_length or 0)
        with trio.CancelScope(
            deadline=self._deadline_base + size / settings.min_body_rate
        ) as waited:
            more = await conn.read_more()
        if waited.cancelled_caught:
            self.keep_alive = False
            raise HeadRejected(408, "the request body took too long to arrive")
        return more

    async def _wait_disconnect(self) -> None:
        conn = self._conn
        with trio.CancelScope() as scope:
            self._waiter = scope
            try:
                while len(conn.buffer) < _READ_AHEAD:
                    if not await conn.read_more():
                        return
                # A client that pipelines this much is not going anywhere: stop reading.
                await trio.sleep_forever()
            finally:
                self._waiter = None

    # --- send ----------------------------------------------------------------------------

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.body":
            await self._send_body(message.get("body", b""), more=message.get("more_body", False))
        elif kind == "http.response.start":
            if self.started:
                raise RuntimeError("http.response.start sent twice")
            self.started = True
            self._start = message
            if not self.body_done:
                # The client is still sending a body nobody read: the connection cannot
                # carry another request reliably after this answer.
                self.keep_alive = False
        else:
            raise RuntimeError(f"unexpected ASGI message {kind!r} for an http scope")

    async def _send_body(self, body: bytes, *, more: bool) -> None:
        start = self._start
        if start is None:
            if self.complete:
                raise RuntimeError("http.response.body sent after the response was complete")
            raise RuntimeError("http.response.body sent before http.response.start")
        if self._head_written:
            out = bytearray()
        else:
            out = self._head_bytes(start, None if more else len(body))
            self._head_written = True
        if body and self._head.method != "HEAD":
            self._sent += len(body)
            if self._chunked:
                out += b"%x\r\n%b\r\n" % (len(body), body)
            else:
                out += body
        if not more:
            self._finish(out)
        if out:
            await self._conn.write(out)

    def _finish(self, out: bytearray) -> None:
        """Mark the response complete (ending ``out`` as its framing needs)."""
        if self._chunked and self._head.method != "HEAD":
            out += b"0\r\n\r\n"
        self.complete = True
        self._start = None
        if self._declared is not None and self._declared != self._sent:
            self.keep_alive = False
        if self._waiter is not None:
            self._waiter.cancel()

    def _framing(self, length: int | None) -> bytes:
        """The framing field of a response the application did not frame itself."""
        if length is not None:
            return b"content-length: %d\r\n" % length
        if self._head.http_version == "1.0":
            # RFC 9112 section 6.1: no chunked coding to an HTTP/1.0 client; the body ends
            # when the connection does (section 6.3, rule 8).
            self.keep_alive = False
            return b""
        self._chunked = True
        return b"transfer-encoding: chunked\r\n"

    def _head_bytes(self, start: Message, length: int | None) -> bytearray:
        status = int(start["status"])
        out = bytearray(_status_line(status))
        framed = False
        for name, value in start.get("headers", ()):
            if b"\n" in name or b"\r" in name or b"\n" in value or b"\r" in value:
                raise RuntimeError(f"header {bytes(name)[:40]!r} contains CR or LF")
            lowered = name.lower()
            if lowered == b"content-length":
                self._declared = int(value)
                framed = True
            elif lowered in (b"transfer-encoding", b"connection"):
                continue  # framing and connection handling are the server's
            out += name
            out += b": "
            out += value
            out += b"\r\n"
        if not framed and not (status < 200 or status in (204, 304)):
            out += self._framing(length)
        http10 = self._head.http_version == "1.0"
        if self._server.closing:
            self.keep_alive = False
        if not self.keep_alive:
            out += b"connection: close\r\n"
        elif http10:
            # An HTTP/1.0 client keeps the connection only when told so (RFC 9112 C.2.2).
            out += b"connection: keep-alive\r\n"
        out += _SERVER
        out += _CLOCK.date_line()
        out += b"\r\n"
        return out


def _scope(conn: _Connection, head: RequestHead, kind: str) -> Scope:
    return {
        "type": kind,
        "asgi": _ASGI,
        "http_version": head.http_version,
        "method": head.method,
        "scheme": "http" if kind == "http" else "ws",
        "path": head.path,
        "raw_path": head.raw_path,
        "query_string": head.query,
        "root_path": "",
        "headers": head.headers,
        "client": conn.client,
        "server": conn.server,
        "extensions": {},
    }


def _check_incomplete_head(buffer: bytearray) -> None:
    """Refuse a head that is not complete yet but already cannot be served."""
    if len(buffer) > MAX_HEAD_SIZE:
        raise HeadRejected(431, f"the request head is larger than {MAX_HEAD_SIZE} bytes")
    if buffer.count(b"\n") != buffer.count(b"\r\n"):
        # RFC 9112 section 2.2 lets a server take a bare LF as a line end; h11 does, so a
        # front end may too. Refusing it keeps such a head from being framed two ways (here
        # it would otherwise run on to the next CRLF CRLF).
        raise HeadRejected(400, BARE_LF)


async def _next_head(conn: _Connection, server: _Server) -> tuple[RequestHead, bytes] | None:
    """Read and parse the next request head; ``None`` when the connection should end."""
    searched = 0
    deadline = math.inf
    while True:
        buffer = conn.buffer
        while buffer[:2] == b"\r\n":
            # RFC 9112 section 2.2: empty lines before a request line are ignored (see
            # _h1_parse._split_head).
            del buffer[:2]
        end = buffer.find(b"\r\n\r\n", searched)
        if end >= 0:
            raw = bytes(buffer[: end + 4])
            del buffer[: end + 4]
            return parse_head(raw), raw
        _check_incomplete_head(buffer)
        searched = max(0, len(buffer) - 3)
        if conn.eof or conn.broken:
            return None
        if not buffer:
            if not await _wait_idle(conn, server):
                return None
            continue
        if deadline == math.inf:
            # The whole head must arrive within head_timeout of its first byte, however
            # the bytes trickle in.
            deadline = trio.current_time() + server.settings.head_timeout
        with trio.CancelScope(deadline=deadline) as waited:
            more = await conn.read_more()
        if waited.cancelled_caught:
            await conn.write(_plain_response(408, "the request head took too long to arrive"))
            return None
        if not more:
            return None


async def _wait_idle(conn: _Connection, server: _Server) -> bool:
    """Wait for the first bytes of a request; False when the connection should end.

    An idle connection is closed after ``keep_alive_timeout``, at once when the server
    stops, and when a new connection needs its place (``_Server.admit``).
    """
    if server.closing:
        return False
    more = False
    with trio.CancelScope(
        deadline=trio.current_time() + server.settings.keep_alive_timeout
    ) as idle:
        server.idle[idle] = None
        try:
            more = await conn.read_more()
        finally:
            server.idle.pop(idle, None)
    return more and not idle.cancelled_caught


async def _serve_connection(server: _Server, stream: trio.abc.Stream) -> None:
    """Serve the requests of one connection until either side ends it."""
    if not server.admit():
        await trio.aclose_forcefully(stream)
        return
    conn = _Connection(stream)
    server.active += 1
    try:
        async with stream:
            await _serve_requests(server, conn)
    finally:
        server.connection_ended()


async def _serve_requests(server: _Server, conn: _Connection) -> None:
    # After the client's end of input (a half-close), the requests it sent before are still
    # served: only what was read is left to parse.
    while not conn.broken and not (conn.eof and not conn.buffer):
        try:
            parsed = await _next_head(conn, server)
        except HeadRejected as refusal:
            logger.info("refused an HTTP request from %s: %s", conn.client, refusal.reason)
            await conn.write(_plain_response(refusal.status, refusal.reason))
            return
        if parsed is None:
            return
        head, raw = parsed
        if head.upgrade == b"websocket" and head.method == "GET":
            await serve_websocket_upgrade(
                server.app,
                conn.stream,
                raw + bytes(conn.buffer),
                _scope(conn, head, "websocket"),
                max_message_size=server.settings.max_message_size,
            )
            return
        if not await _run_exchange(server, conn, head):
            return


async def _run_exchange(server: _Server, conn: _Connection, head: RequestHead) -> bool:
    """Run the application for one request; return whether the connection may go on."""
    exchange = _Exchange(server, conn, head)
    try:
        await server.app(_scope(conn, head, "http"), exchange.receive, exchange.send)
    except HeadRejected as refusal:  # a malformed chunked body, found while reading it
        if not exchange.started:
            await conn.write(_plain_response(refusal.status, refusal.reason))
        return False
    except Exception:
        logger.exception("the HTTP application failed on %s %s", head.method, head.path)
        if not exchange.started:
            await conn.write(_plain_response(500, "the server failed to answer this request"))
        return False
    if not exchange.complete:
        if not exchange.started:
            logger.error("the HTTP application sent no response to %s %s", head.method, head.path)
            await conn.write(_plain_response(500, "the server sent no response"))
        return False
    return exchange.keep_alive and exchange.body_done and not server.closing


async def _shielded_nursery(
    *, task_status: trio.TaskStatus[tuple[trio.Nursery, trio.CancelScope]]
) -> None:
    """A nursery that the server's own cancellation does not reach (graceful shutdown)."""
    with trio.CancelScope(shield=True) as scope:
        async with trio.open_nursery() as nursery:
            task_status.started((nursery, scope))
            await trio.sleep_forever()


async def serve_h1(
    app: App,
    listeners: list[trio.SocketListener],
    *,
    settings: H1Settings | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` over HTTP/1.1 on ``listeners`` until cancelled (module docstring)."""
    chosen = settings or H1Settings()
    server = _Server(app, chosen)
    async with trio.open_nursery() as nursery:
        connections, shield = await nursery.start(_shielded_nursery)
        try:
            await nursery.start(
                partial(
                    trio.serve_listeners,
                    partial(_serve_connection, server),
                    listeners,
                    handler_nursery=connections,
                )
            )
            task_status.started()
            await trio.sleep_forever()
        finally:
            server.shut_down()
            shield.deadline = (
                trio.current_time() + chosen.graceful_timeout
                if math.isfinite(chosen.graceful_timeout)
                else math.inf
            )
            # Wait for the connections still serving a request, up to the deadline; then
            # end the shielded nursery (cancelling whatever is left).
            with trio.CancelScope(shield=True, deadline=shield.deadline):
                await server.drained.wait()
            shield.cancel()
