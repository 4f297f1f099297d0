"""``H1Pool``: a lean HTTP/1.1 client for the Streamable HTTP hot path (POST, GET, DELETE).

Why not httpx for every request: on this transport each message is its own POST, and httpx
(request model, URL parsing, cookie jar, auth and redirect machinery, httpcore's pool and
h11 events, async generator chains) costs ~1.5-1.8 ms of CPU per request on a small
machine, against ~0.25 ms for writing one request and reading its answer on a kept-alive
trio socket (``bench/RESULTS.md``, gateway section). So requests are written here in one
``send_all`` and answers framed by hand (RFC 9112: Content-Length, chunked, or until close),
with the body handed on as it arrives so SSE events are not held back.

What httpx does that this does not, and where it stays in charge: proxies from the
environment (``pool_for`` returns None for a URL that one applies to: the caller keeps
using httpx) and redirects (an answer 3xx with ``Location`` is returned as
``H1Response.redirect``; the caller repeats the request through httpx, which follows it).
TLS uses httpx's own default context (certifi, ``SSL_CERT_FILE``), so verification is the
same. Failures raise httpx's exception classes (``ConnectError``, ``ReadTimeout``, ...)
with the underlying error as ``__cause__``, so ``_errors.connection_error`` explains them
the same way.

A kept-alive connection the server closed while idle fails its next request before any
answer byte; such a request is sent again once on a new connection (it never reached the
server's application: HTTP/1.1 servers only close idle connections between requests).
"""

from __future__ import annotations

import math
import select
import time
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING, Final, final

import httpx
import trio

if TYPE_CHECKING:
    import ssl
    from collections.abc import Callable, Mapping

__all__ = ["H1Pool", "H1Response", "pool_for"]

# The longest response head accepted (status line and headers).
_MAX_HEAD: Final = 64 * 1024
# Connections kept open between requests (httpx's default keep-alive count).
_MAX_IDLE: Final = 20
# An idle connection older than this is checked for a close by the server before reuse.
_CHECK_IDLE_AFTER: Final = 1.0
_RECEIVE: Final = 65536
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_BAD_HEADER_CHARS: Final = ("\r", "\n", "\0")
# ``_chunk_left`` while a chunk's data has been taken and its CRLF is still to come.
_CRLF_NEXT: Final = -2


def pool_for(url: str, *, connect_timeout: float, read_timeout: float | None) -> H1Pool | None:
    """Return a pool for ``url``; None if an environment proxy applies to it (use httpx)."""
    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies()
    if (proxies.get(parts.scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(
        parts.hostname or ""
    ):
        return None
    return H1Pool(url, connect_timeout=connect_timeout, read_timeout=read_timeout)


def _check_header(name: str, value: str) -> None:
    if any(bad in name or bad in value for bad in _BAD_HEADER_CHARS) or ":" in name:
        raise httpx.LocalProtocolError(f"invalid HTTP header {name!r}")


@final
class _Conn:
    """One kept-alive connection and the bytes read past the previous answer."""

    __slots__ = ("buffer", "idle_since", "reused", "sent", "stream")

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.buffer = bytearray()
        self.idle_since = 0.0
        self.reused = False
        self.sent = False  # the current request was written (its answer is awaited)

    def closed_by_peer(self) -> bool:
        """Whether the server closed (or wrote to) the idle connection: not reusable."""
        if self.buffer:
            return True
        socket = getattr(self.stream, "socket", None)
        if socket is None:  # TLS: the transport stream holds the socket
            socket = getattr(getattr(self.stream, "transport_stream", None), "socket", None)
        if socket is None:
            return False
        readable, _, _ = select.select([socket.fileno()], [], [], 0)
        return bool(readable)


@final
class H1Pool:
    """HTTP/1.1 connections to one origin, kept alive and reused (module docstring)."""

    def __init__(self, url: str, *, connect_timeout: float, read_timeout: float | None) -> None:
        parts = urllib.parse.urlsplit(url)
        self._tls = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._tls else 80)
        default_port = parts.port is None or parts.port == (443 if self._tls else 80)
        host = f"[{self._host}]" if ":" in self._host else self._host
        self._host_header = host if default_port else f"{host}:{self._port}"
        self._target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._idle: list[_Conn] = []
        self._ssl: ssl.SSLContext | None = None
        self._closed = False

    async def send(
        self,
        method: str,
        headers: Mapping[str, str],
        body: bytes = b"",
        *,
        on_sent: Callable[[], object] | None = None,
    ) -> H1Response:
        """Send one request; return its answer once the head arrived (the body streams).

        ``on_sent`` is called once the request is written. Close the answer with
        ``aclose`` (which keeps the connection for the next request if the body was read
        to its end).

        Raises:
            httpx.HTTPError: connecting, writing or reading the head failed.
        """
        data = self._encode(method, headers, body)
        for _ in range(2):
            conn = await self._connection()
            try:
                return await self._exchange(conn, method, data, on_sent)
            except _StaleConnection:
                continue  # the server closed it while idle: once more on a new one
        raise httpx.RemoteProtocolError("the server closed the connection without answering")

    def _encode(self, method: str, headers: Mapping[str, str], body: bytes) -> bytes:
        lines = [f"{method} {self._target} HTTP/1.1\r\nhost: {self._host_header}\r\n"]
        for name, value in headers.items():
            _check_header(name, value)
            lines.append(f"{name}: {value}\r\n")
        if body or method == "POST":
            lines.append(f"content-length: {len(body)}\r\n")
        lines.append("\r\n")
        try:
            return "".join(lines).encode("ascii") + body
        except UnicodeEncodeError as exc:
            raise httpx.LocalProtocolError(f"a header is not ASCII ({exc})") from exc

    async def _connection(self) -> _Conn:
        while self._idle:
            conn = self._idle.pop()
            if time.monotonic() - conn.idle_since < _CHECK_IDLE_AFTER or not conn.closed_by_peer():
                conn.reused = True
                return conn
            await trio.aclose_forcefully(conn.stream)
        return _Conn(await self._connect())

    async def _connect(self) -> trio.abc.Stream:
        try:
            with trio.fail_after(self._connect_timeout):
                stream: trio.abc.Stream = await trio.open_tcp_stream(self._host, self._port)
                if self._tls:
                    if self._ssl is None:
                        self._ssl = httpx.create_ssl_context()
                    tls = trio.SSLStream(
                        stream, self._ssl, server_hostname=self._host, https_compatible=True
                    )
                    try:
                        await tls.do_handshake()
                    except BaseException:
                        await trio.aclose_forcefully(stream)
                        raise
                    stream = tls
                return stream
        except trio.TooSlowError as exc:
            where = f"{self._host}:{self._port}"
            raise httpx.ConnectTimeout(f"connecting to {where} timed out") from exc
        except (OSError, trio.BrokenResourceError) as exc:
            raise httpx.ConnectError(str(exc) or repr(exc)) from exc

    async def _exchange(
        self, conn: _Conn, method: str, data: bytes, on_sent: Callable[[], object] | None
    ) -> H1Response:
        # One cancel scope for writing and reading the head, its deadline moved on from
        # phase to phase (a scope per step costs more than the rest of the exchange).
        ok = False
        scope = trio.CancelScope(deadline=trio.current_time() + self._connect_timeout)
        try:
            with scope:
                try:
                    await conn.stream.send_all(data)
                except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                    if conn.reused:
                        raise _StaleConnection from exc
                    raise httpx.WriteError(str(exc) or repr(exc)) from exc
                if on_sent is not None:
                    on_sent()
                response = await self._read_head(conn, method, scope)
                ok = True
                return response
            # Only this scope's own deadline ends up here: a timeout.
            raise (
                httpx.ReadTimeout("the server sent nothing in time")
                if conn.sent
                else httpx.WriteTimeout("writing the request timed out")
            )
        finally:
            if not ok:
                await trio.aclose_forcefully(conn.stream)

    async def _receive(self, conn: _Conn) -> bytes:
        try:
            if self._read_timeout is None:
                return bytes(await conn.stream.receive_some(_RECEIVE))
            with trio.fail_after(self._read_timeout):
                return bytes(await conn.stream.receive_some(_RECEIVE))
        except trio.TooSlowError as exc:
            raise httpx.ReadTimeout("the server sent nothing in time") from exc
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise httpx.ReadError(str(exc) or repr(exc)) from exc

    def _read_deadline(self) -> float:
        if self._read_timeout is None:
            return math.inf
        return trio.current_time() + self._read_timeout

    async def _read_head(self, conn: _Conn, method: str, scope: trio.CancelScope) -> H1Response:
        """Read the answer's head; ``scope`` bounds the silence (``read_timeout``)."""
        conn.sent = True
        scope.deadline = self._read_deadline()
        buffer = conn.buffer
        while True:
            end = buffer.find(b"\r\n\r\n")
            while end < 0:
                if len(buffer) > _MAX_HEAD:
                    raise httpx.RemoteProtocolError("the server's answer head is too long")
                try:
                    chunk = await conn.stream.receive_some(_RECEIVE)
                except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                    if conn.reused and not buffer:
                        raise _StaleConnection from exc
                    raise httpx.ReadError(str(exc) or repr(exc)) from exc
                if not chunk:
                    if conn.reused and not buffer:
                        raise _StaleConnection
                    raise httpx.RemoteProtocolError(
                        "the server closed the connection without sending a complete answer"
                    )
                conn.reused = False  # bytes came: the request reached the server
                buffer += chunk
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    scope.deadline = self._read_deadline()
            head = bytes(buffer[:end])
            del buffer[: end + 4]
            status, headers = _parse_head(head)
            if 100 <= status < 200 and status != 101:  # interim: skip it
                continue
            return H1Response(self, conn, method, status, headers)

    def keep(self, conn: _Conn) -> bool:
        """Keep ``conn`` for the next request if there is room; False: close it."""
        if self._closed or len(self._idle) >= _MAX_IDLE:
            return False
        conn.idle_since = time.monotonic()
        conn.sent = False
        self._idle.append(conn)
        return True

    async def aclose(self) -> None:
        """Close the idle connections; answers still open close their own."""
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            await trio.aclose_forcefully(conn.stream)


class _StaleConnection(Exception):  # internal signal, never raised out
    """A reused connection failed before any answer byte: retry on a new one."""


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    try:
        text = head.decode("latin-1")
        status_line, _, rest = text.partition("\r\n")
        version, status_text = status_line.split(" ", 2)[:2]
        if not version.startswith("HTTP/1."):
            raise ValueError(version)
        status = int(status_text)
        headers: dict[str, str] = {}
        for line in rest.split("\r\n") if rest else ():
            name, sep, value = line.partition(":")
            if not sep or not name or name[0] in " \t" or name[-1] in " \t":
                raise ValueError(line)
            key = name.lower()
            value = value.strip(" \t")
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
    except ValueError as exc:
        raise httpx.RemoteProtocolError(f"the server's answer is not HTTP/1.1 ({exc})") from exc
    return status, headers


@final
class H1Response:
    """An answer: status and headers now, the body through ``aiter_bytes`` as it arrives."""

    def __init__(  # the parts of one answer
        self, pool: H1Pool, conn: _Conn, method: str, status: int, headers: dict[str, str]
    ) -> None:
        self._pool = pool
        self._conn: _Conn | None = conn
        self.status_code = status
        self.headers = headers
        self._keep = "close" not in headers.get("connection", "").lower()
        encoding = headers.get("transfer-encoding", "").lower()
        self._chunked = encoding.rsplit(",", 1)[-1].strip() == "chunked"
        self._remaining: int | None = None  # bytes of body left (Content-Length framing)
        self._chunk_left = 0  # bytes left in the current chunk
        self._done = False
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            self._done = True
        elif not self._chunked and encoding:
            self._keep = False  # another coding than chunked last: read until close
        elif not self._chunked:
            length = headers.get("content-length")
            if length is not None:
                try:
                    self._remaining = int(length.split(",")[0])
                except ValueError:
                    raise httpx.RemoteProtocolError(
                        f"the server sent Content-Length {length!r}"
                    ) from None
                self._done = self._remaining == 0
            else:
                self._keep = False  # read until the server closes

    @property
    def is_success(self) -> bool:
        """A 2xx status."""
        return 200 <= self.status_code < 300

    @property
    def redirect(self) -> bool:
        """A redirect with a ``Location``: repeat the request through httpx to follow it."""
        return self.status_code in _REDIRECTS and "location" in self.headers

    def aiter_bytes(self) -> H1Response:
        """Iterate over the body's bytes as they arrive (this object is the iterator)."""
        return self

    def __aiter__(self) -> H1Response:
        return self

    async def __anext__(self) -> bytes:
        conn = self._conn
        if self._done or conn is None:
            raise StopAsyncIteration
        while True:
            piece = self._take(conn.buffer)
            if piece:
                return piece
            if self._done:
                raise StopAsyncIteration
            chunk = await self._pool._receive(conn)  # the pool's own reader
            if not chunk:
                if self._remaining is None and not self._chunked:
                    self._done = True  # framed by the close
                    raise StopAsyncIteration
                raise httpx.RemoteProtocolError("the server closed the connection mid-answer")
            conn.buffer += chunk

    def _take(self, buffer: bytearray) -> bytes:
        """Take the body bytes ``buffer`` holds now (maybe none); set ``_done`` at the end."""
        if self._chunked:
            return self._take_chunks(buffer)
        if self._remaining is None:
            piece = bytes(buffer)
            buffer.clear()
            return piece
        piece = bytes(buffer[: self._remaining])
        del buffer[: len(piece)]
        self._remaining -= len(piece)
        self._done = self._remaining == 0
        return piece

    def _take_chunks(self, buffer: bytearray) -> bytes:
        """``_take`` for a chunked body: the data of the chunks in ``buffer``, framing gone."""
        pieces: list[bytes] = []
        while True:
            if self._chunk_left > 0:
                piece = bytes(buffer[: self._chunk_left])
                del buffer[: len(piece)]
                self._chunk_left -= len(piece)
                pieces.append(piece)
                if self._chunk_left:
                    break
                self._chunk_left = _CRLF_NEXT
            if self._chunk_left == _CRLF_NEXT:
                if len(buffer) < len(b"\r\n"):
                    break
                if buffer[:2] != b"\r\n":
                    raise httpx.RemoteProtocolError("a chunk of the answer does not end in CRLF")
                del buffer[:2]
                self._chunk_left = 0
            if not self._chunk_start(buffer):
                break
        return b"".join(pieces)

    def _chunk_start(self, buffer: bytearray) -> bool:
        """Read a chunk's size line from ``buffer``; False if not all here yet, or the end."""
        end = buffer.find(b"\r\n")
        if end < 0:
            return False
        size_text = bytes(buffer[:end]).split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise httpx.RemoteProtocolError(f"a bad chunk size {size_text!r}") from None
        if size == 0:
            trailer_end = buffer.find(b"\r\n\r\n", end)
            if trailer_end >= 0:  # else the trailers (or the final CRLF) are still to come
                del buffer[: trailer_end + 4]
                self._done = True
            return False
        del buffer[: end + 2]
        self._chunk_left = size
        return True

    async def aread(self) -> bytes:
        """Read the rest of the body."""
        return b"".join([piece async for piece in self])

    def release(self) -> bool:
        """Give the connection back if the body was read to its end; False: not done."""
        conn = self._conn
        if conn is None:
            return True
        if self._done and self._keep and self._pool.keep(conn):
            self._conn = None
            return True
        return False

    async def aclose(self) -> None:
        """Give the connection back (the body was read to its end) or close it."""
        if not self.release():
            conn, self._conn = self._conn, None
            if conn is not None:
                await trio.aclose_forcefully(conn.stream)
