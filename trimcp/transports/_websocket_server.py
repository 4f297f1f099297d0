"""``serve_websocket``: accept MCP clients over WebSocket, one ``WebSocketStream`` task each.

Each opening handshake is checked before it is accepted, in this order: the request path
(404), ``Host`` and ``Origin`` against an ``OriginPolicy`` (421 / 403, DNS-rebinding
protection), the subprotocol ``mcp`` (400; ``_ws_protocol.py`` says why it is required). A
refusal carries a plain-text body that names what was refused and the option that would
allow it. An accepted connection's stream goes to ``on_stream`` in a task of its own.

The accept loop is trio's ``serve_listeners`` with trio-websocket's ``wrap_server_stream``
per connection, not trio-websocket's ``serve_websocket``: there, one connection whose reader
task fails (a ``Host`` header that is not IDNA makes wsproto raise ``UnicodeError``) stops
the whole server. Here ``ReaderGuard`` keeps such failures to their own connection.

Stopping (cancelling ``serve_websocket``) first stops listening, then closes every live
connection with 1001 Going Away while the connections' reader tasks still run to receive
the answers (bounded by ``close_timeout``), and only then cancels what is left. Connection
tasks therefore run in a nursery shielded from the server's own cancellation.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Final, NoReturn, TypedDict, Unpack, cast, final

import trio
import trio_websocket

from trimcp.protocol import DEFAULT_MAX_MESSAGE_SIZE

from ._origin import LOCALHOST, HeaderProblem, OriginPolicy
from ._websocket import DEFAULT_CLOSE_TIMEOUT, ReaderGuard, WebSocketStream
from ._websocket_client import DEFAULT_CONNECT_TIMEOUT
from ._ws_protocol import SUBPROTOCOL, CloseCode, check_handshake

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

__all__ = ["DEFAULT_PATH", "WebSocketServerInfo", "WebSocketServerOptions", "serve_websocket"]

logger = logging.getLogger(__name__)

#: Where ``serve_websocket`` accepts connections unless told otherwise.
DEFAULT_PATH: Final = "/mcp/ws"


class WebSocketServerOptions(TypedDict, total=False):
    """Keyword options of ``serve_websocket``, all optional.

    ``path`` (default ``DEFAULT_PATH``, ``/mcp/ws``): the only request path accepted; the
    query string is ignored. ``allowed_hosts`` / ``allowed_origins`` (default
    ``LOCALHOST``): ``OriginPolicy`` patterns. ``max_message_size``: bytes a client may
    send in one message (default ``DEFAULT_MAX_MESSAGE_SIZE``). ``handshake_timeout``:
    seconds a client gets to complete its handshake after connecting (default
    ``DEFAULT_CONNECT_TIMEOUT``). ``close_timeout``: seconds a closing handshake may take
    (default ``DEFAULT_CLOSE_TIMEOUT``).
    """

    path: str
    allowed_hosts: Sequence[str]
    allowed_origins: Sequence[str]
    max_message_size: int
    handshake_timeout: float
    close_timeout: float


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class WebSocketServerInfo:
    """Where ``serve_websocket`` listens: what ``nursery.start`` returns.

    With port 0 and a host name that resolves to several addresses, each listener may get
    its own port; this describes the first.
    """

    host: str
    port: int
    path: str

    @property
    def url(self) -> str:
        """The ``ws://`` URL clients connect to."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}{self.path}"


@final
class _Acceptor:
    """Runs each TCP connection: handshake checks, ``on_stream``, close. Tracks live streams."""

    def __init__(
        self,
        on_stream: Callable[[WebSocketStream], Awaitable[None]],
        options: WebSocketServerOptions,
    ) -> None:
        self._on_stream = on_stream
        self.path = options.get("path", DEFAULT_PATH)
        self._policy = OriginPolicy(
            allowed_hosts=tuple(options.get("allowed_hosts", LOCALHOST)),
            allowed_origins=tuple(options.get("allowed_origins", LOCALHOST)),
        )
        self._max_message_size = options.get("max_message_size", DEFAULT_MAX_MESSAGE_SIZE)
        self._handshake_timeout = options.get("handshake_timeout", DEFAULT_CONNECT_TIMEOUT)
        self.close_timeout = options.get("close_timeout", DEFAULT_CLOSE_TIMEOUT)
        self._live: set[WebSocketStream] = set()

    async def serve_connection(self, tcp: trio.SocketStream) -> None:
        """Serve one TCP connection until its stream is closed (trio closes ``tcp`` after)."""
        async with trio.open_nursery() as nursery:
            guard = ReaderGuard(nursery, tcp)
            with trio.move_on_after(self._handshake_timeout) as waiting:
                guard.handshake = waiting
                request = await trio_websocket.wrap_server_stream(
                    cast("trio.Nursery", guard),  # it only calls start_soon
                    tcp,
                    max_message_size=self._max_message_size,
                )
            guard.handshake = None
            if not waiting.cancelled_caught:
                await self._answer(request)
            # Refused, timed out or done: the reader has nothing left to read for anyone.
            nursery.cancel_scope.cancel()

    async def _answer(self, request: trio_websocket.WebSocketRequest) -> None:
        problem = self._problem(request)
        if problem is not None:
            level = logging.WARNING if problem.status in (403, 421) else logging.INFO
            logger.log(
                level, "refused a WebSocket handshake from %s: %s", request.remote, problem.message
            )
            await request.reject(
                problem.status,
                extra_headers=[(b"content-type", b"text/plain; charset=utf-8")],
                body=problem.message.encode(),
            )
            return
        connection = await request.accept(subprotocol=SUBPROTOCOL)
        stream = WebSocketStream(
            connection, max_message_size=self._max_message_size, close_timeout=self.close_timeout
        )
        logger.debug("WebSocket connection from %s accepted", request.remote)
        self._live.add(stream)
        try:
            await self._on_stream(stream)
        finally:
            self._live.discard(stream)
            await stream.aclose()

    def _problem(self, request: trio_websocket.WebSocketRequest) -> HeaderProblem | None:
        path = request.path.partition("?")[0]
        if path != self.path:
            return HeaderProblem(
                status=404,
                header="path",
                value=path,
                message=f"no MCP WebSocket endpoint at {path[:200]!r}; connect to {self.path!r}",
            )
        headers = list(request.headers)
        host = _host_of(request)
        if host is not None:
            headers.append((b"host", host.encode("utf-8")))
        return check_handshake(self._policy, headers, request.proposed_subprotocols)

    async def going_away(self) -> None:
        """Close every live connection with 1001, concurrently."""
        async with trio.open_nursery() as nursery:
            for stream in list(self._live):
                nursery.start_soon(
                    partial(stream.aclose, code=CloseCode.GOING_AWAY, reason="server stopping")
                )


def _host_of(request: trio_websocket.WebSocketRequest) -> str | None:
    """Return the request's Host header, or ``None`` (refused as missing) if unknown.

    wsproto takes Host out of the headers trio-websocket shows (its ``Request.host``), and
    trio-websocket 0.12 has no public accessor for it, so this reads its ``_event``. Should
    that change, every handshake fails closed with 400 and tests/transports notice.
    """
    host = getattr(getattr(request, "_event", None), "host", None)
    return host if isinstance(host, str) else None


async def _shielded_nursery(
    *, task_status: trio.TaskStatus[tuple[trio.Nursery, trio.CancelScope]]
) -> None:
    """Run a nursery that outer cancellation does not reach, until its scope is cancelled."""
    with trio.CancelScope(shield=True) as scope:
        async with trio.open_nursery() as nursery:
            task_status.started((nursery, scope))
            await trio.sleep_forever()


async def serve_websocket(
    on_stream: Callable[[WebSocketStream], Awaitable[None]],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    task_status: trio.TaskStatus[WebSocketServerInfo] = trio.TASK_STATUS_IGNORED,
    **options: Unpack[WebSocketServerOptions],
) -> NoReturn:
    """Serve MCP over WebSocket on ``host``:``port`` until cancelled.

    Use ``info = await nursery.start(serve_websocket, on_stream)``; ``info.url`` is where
    clients connect (port 0 picks a free port). Handshakes are checked as the module
    docstring says. Each accepted connection's stream goes to ``on_stream`` in its own
    task; when ``on_stream`` returns the stream is closed (1000). An exception from
    ``on_stream`` stops the server and is raised here, so ``on_stream`` should run the
    session under a supervisor. When cancelled, connections are closed with 1001 Going Away.

    Raises:
        OSError: the address cannot be bound (``cannot listen on HOST:PORT: reason``).
    """
    acceptor = _Acceptor(on_stream, options)
    try:
        listeners = await trio.open_tcp_listeners(port, host=host)
    except OSError as exc:
        # The OS's message ("Address already in use") does not say which address.
        shown = f"[{host}]" if ":" in host else host
        reason = f"cannot listen on {shown}:{port}: {exc.strerror or exc}"
        raise OSError(exc.errno, reason) from exc
    try:
        async with trio.open_nursery() as nursery:
            connections, shield = await nursery.start(_shielded_nursery)
            try:
                await nursery.start(
                    partial(
                        trio.serve_listeners,
                        acceptor.serve_connection,
                        listeners,
                        handler_nursery=connections,
                    )
                )
                name = listeners[0].socket.getsockname()
                info = WebSocketServerInfo(host=name[0], port=name[1], path=acceptor.path)
                logger.info("serving MCP over WebSocket at %s", info.url)
                task_status.started(info)
                await trio.sleep_forever()
            finally:
                with trio.CancelScope(shield=True), trio.move_on_after(acceptor.close_timeout):
                    await acceptor.going_away()
                shield.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            error = group.exceptions[0]
            raise error from error.__cause__
        raise
