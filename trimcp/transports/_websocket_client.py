"""``open_websocket_stream``: connect to an MCP server over WebSocket, with errors that explain.

A client that cannot connect should say why in words a person can act on: nothing listens
there (``ConnectFailed``), the server said no and why (``HandshakeRejected``, with the HTTP
status and the start of its body), or the server is not an MCP WebSocket endpoint
(``SubprotocolRefused``). trio-websocket would raise its own ``HandshakeError`` family, a
bare ``OSError``, or wait 60 s; this module turns each into one of ours.

The TCP (and TLS) stream is opened and closed here, not by trio-websocket: trio-websocket
0.12 never closes a client socket whose server closed the connection first.
"""

from __future__ import annotations

import ssl
import urllib.parse
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, cast, final

import trio
import trio_websocket

from trimcp.errors import ConnectFailed, HandshakeRejected, SubprotocolRefused
from trimcp.protocol import DEFAULT_MAX_MESSAGE_SIZE

from ._websocket import ReaderGuard, WebSocketStream
from ._ws_protocol import SUBPROTOCOL, CloseCode

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "open_websocket_stream"]

#: Seconds to dial, finish TLS and finish the opening handshake. A local handshake takes
#: milliseconds; trio-websocket's own default (60 s) would let a dead server stall a client.
DEFAULT_CONNECT_TIMEOUT: Final = 10.0

# How much of a refusal's body the error quotes.
_BODY_QUOTE = 300

_TcpStream = trio.SocketStream | trio.SSLStream[trio.SocketStream]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class _Dial:
    """Everything one connection attempt needs, from the URL and the options."""

    url: str
    secure: bool
    host: str
    port: int
    resource: str
    headers: list[tuple[bytes, bytes]]
    max_message_size: int
    timeout: float
    deadline: float

    @classmethod
    def plan(
        cls, url: str, headers: Mapping[str, str], max_message_size: int, timeout: float
    ) -> _Dial:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("ws", "wss"):
            raise ValueError(f"a WebSocket URL starts with ws:// or wss://, not {url!r}")
        if not parts.hostname:
            raise ValueError(f"the WebSocket URL {url!r} names no host")
        secure = parts.scheme == "wss"
        encoded = [
            (name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()
        ]
        return cls(
            url=url,
            secure=secure,
            host=parts.hostname,
            port=parts.port or (443 if secure else 80),
            resource=(parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
            headers=encoded,
            max_message_size=max_message_size,
            timeout=timeout,
            deadline=trio.current_time() + timeout,
        )

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.secure else 80
        return host if self.port == default else f"{host}:{self.port}"


@asynccontextmanager
async def open_websocket_stream(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> AsyncIterator[WebSocketStream]:
    """Connect to an MCP WebSocket server and yield the stream; close it on exit.

    Requests subprotocol ``mcp`` and requires the server to select it. ``headers`` go with
    the handshake (``Authorization``, ``Origin``, ...; Latin-1). ``connect_timeout`` bounds
    dialling, TLS and the handshake together (trio time); ``max_message_size`` bounds what
    this side receives, in UTF-8 bytes. Leaving the block closes with 1000, then the TCP
    connection. An exception from the block is raised as is, not in an exception group.

    Raises:
        ValueError: ``url`` is not a ``ws://`` or ``wss://`` URL with a host.
        ConnectFailed: nothing answered in time, the address is unreachable, TLS failed, or
            the handshake broke down.
        HandshakeRejected: the server answered the handshake with an HTTP error status.
        SubprotocolRefused: the server accepted without selecting ``mcp``.
    """
    dial = _Dial.plan(url, headers or {}, max_message_size, connect_timeout)
    tcp = await _open_tcp(dial)
    try:
        async with trio.open_nursery() as nursery:
            connection = await _handshake(nursery, tcp, dial)
            stream = WebSocketStream(connection, max_message_size=max_message_size)
            try:
                yield stream
            finally:
                await stream.aclose()
    except BaseExceptionGroup as group:
        # The nursery wraps the block's own exception: hand it back unwrapped.
        if len(group.exceptions) == 1:
            error = group.exceptions[0]
            raise error from error.__cause__
        raise
    finally:
        await trio.aclose_forcefully(tcp)


async def _open_tcp(dial: _Dial) -> _TcpStream:
    """Open the TCP connection, and TLS for ``wss://``."""
    stream: _TcpStream | None = None
    try:
        with trio.fail_at(dial.deadline):
            stream = await trio.open_tcp_stream(dial.host, dial.port)
            if not dial.secure:
                return stream
            tls = trio.SSLStream(
                stream,
                ssl.create_default_context(),
                server_hostname=dial.host,
                https_compatible=True,
            )
            stream = tls
            await tls.do_handshake()
            return tls
    except trio.TooSlowError:
        problem = f"no connection within {dial.timeout:g} s"
    except OSError as exc:
        problem = f"unreachable ({exc.strerror or exc})"
    except trio.BrokenResourceError as exc:
        problem = f"the TLS handshake failed ({exc.__cause__ or exc})"
    if stream is not None:
        await trio.aclose_forcefully(stream)
    raise ConnectFailed(dial.url, problem)


async def _handshake(
    nursery: trio.Nursery, tcp: _TcpStream, dial: _Dial
) -> trio_websocket.WebSocketConnection:
    """Run the opening handshake over ``tcp``; the reader task lives in ``nursery``."""
    guard = ReaderGuard(nursery, tcp)
    with trio.move_on_at(dial.deadline) as waiting:
        guard.handshake = waiting
        connection = await trio_websocket.wrap_client_stream(
            cast("trio.Nursery", guard),  # it only calls start_soon
            tcp,
            dial.host_header,
            dial.resource,
            subprotocols=[SUBPROTOCOL],
            extra_headers=dial.headers,
            max_message_size=dial.max_message_size,
        )
    guard.handshake = None
    if waiting.cancelled_caught:
        raise _handshake_failure(dial, guard.crash)
    if connection.subprotocol != SUBPROTOCOL:
        # RFC 6455 section 4.1: the client fails the connection; a reason helps the server.
        with trio.move_on_at(dial.deadline):
            await connection.aclose(
                CloseCode.PROTOCOL_ERROR, f"subprotocol {SUBPROTOCOL!r} required"
            )
        raise SubprotocolRefused(dial.url, SUBPROTOCOL, connection.subprotocol)
    return connection


def _handshake_failure(dial: _Dial, crash: Exception | None) -> ConnectFailed:
    if isinstance(crash, trio_websocket.ConnectionRejected):
        body = (crash.body or b"")[:_BODY_QUOTE].decode(errors="replace").strip()
        return HandshakeRejected(dial.url, crash.status_code, body)
    if crash is not None:
        return ConnectFailed(dial.url, f"the WebSocket handshake failed ({crash!r})")
    if trio.current_time() < dial.deadline:
        return ConnectFailed(dial.url, "the server ended the connection during the handshake")
    return ConnectFailed(dial.url, f"no WebSocket handshake within {dial.timeout:g} s")
