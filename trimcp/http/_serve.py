"""Running the HTTP listener: the session manager and the HTTP server, under one supervisor.

::

    http supervisor (rest_for_one)
    ├── SessionManager         the sessions of this listener (and their supervisor)
    └── listener               ``McpHttpApp`` on trimcp's HTTP/1.1 server (``_h1.py``),
                               or on hypercorn's trio worker (``engine="hypercorn"``)

``rest_for_one``: if the manager fails, the listener restarts with the new one (it holds
the manager's table); the listener failing alone does not touch the sessions.

The two engines serve the same ASGI application. trimcp's own is the default: it costs a
fraction of hypercorn's CPU per request (bench/RESULTS.md) and serves HTTP/1.1 and the
WebSocket upgrade, which is what MCP clients use. hypercorn stays available for what only it
offers (HTTP/2, TLS termination in-process, its ``Config`` options).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from trimcp.http._app import McpHttpApp
from trimcp.http._h1 import H1Settings, serve_h1
from trimcp.http._options import HttpOptions
from trimcp.sessions import SessionLimits, SessionManager, SessionOptions
from trimcp.supervision import ChildSpec, open_supervisor, supervisor_spec
from trimcp.transports import MemoryEventStore

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.auth import ResourceServer
    from trimcp.sessions import RequestHandler
    from trimcp.transports import EventStore

__all__ = ["ENGINES", "HttpListener", "ListenerSettings", "http_listener_spec", "serve_http"]

#: The HTTP servers a listener can run on (``ListenerSettings.engine``).
ENGINES: typing.Final = ("trimcp", "hypercorn")

logger = logging.getLogger(__name__)

#: Bytes of chunk framing and trailers a chunked POST may carry beyond ``max_body_size``.
_FRAMING_ALLOWANCE: typing.Final = 64 * 1024


@typing.final
@dataclass(slots=True)
class HttpListener:
    """What a started listener tells its starter: where it listens, its manager, its store.

    ``bound`` turns False when the listener stops (or crashes): its sockets are closed then.
    ``app`` is the ASGI application serving the endpoint.
    """

    urls: list[str]
    manager: SessionManager
    store: EventStore | None = None
    bound: bool = True
    app: McpHttpApp | None = field(default=None, repr=False)

    @property
    def per_request_in_flight(self) -> int:
        """The 2026-07-28 requests being served now: each is its own POST and belongs to no
        session, so the sessions' own counts leave them out."""
        return 0 if self.app is None else self.app.per_request_in_flight

    @property
    def url(self) -> str:
        """The first bound URL of the MCP endpoint, e.g. ``http://127.0.0.1:8000/mcp``."""
        return self.urls[0]


def _hypercorn_config(host: str, port: int) -> Config:
    config = Config()
    bind_host = f"[{host}]" if ":" in host else host
    config.bind = [f"{bind_host}:{port}"]
    config.accesslog = None
    # hypercorn's own messages go through the application's logging (its format, its level)
    # instead of a stderr handler of hypercorn's.
    config.errorlog = logging.getLogger("hypercorn.error")
    # Long-lived clients reuse one connection; hypercorn's default closes it after 1,000
    # requests, which costs a reconnect (hypercorn's keep_alive_max_requests).
    config.keep_alive_max_requests = 10_000_000
    config.graceful_timeout = 1.0
    return config


class ListenerSettings(typing.TypedDict, total=False):
    """Where and how a listener serves.

    ``host`` (default 127.0.0.1) and ``port`` (default 0: a free one); ``options`` the
    endpoint's ``HttpOptions``; ``limits`` the session manager's ``SessionLimits``;
    ``session_options`` each session's (default: the handler's ``session_options``);
    ``store`` the SSE event store (default: an in-memory one sized by ``options``);
    ``engine`` the HTTP server, ``"trimcp"`` (default) or ``"hypercorn"`` (module docstring);
    ``connections`` how trimcp's HTTP/1.1 server treats connections (``H1Settings``: head and
    body deadlines, idle keep-alive, the connection limit; its message and body limits are
    taken from ``session_options`` and ``options``).
    """

    engine: typing.Literal["trimcp", "hypercorn"]
    connections: H1Settings
    host: str
    port: int
    options: HttpOptions
    limits: SessionLimits
    session_options: SessionOptions
    store: EventStore


def http_listener_spec(
    handler: RequestHandler,
    *,
    on_started: typing.Callable[[HttpListener], None] | None = None,
    **settings: typing.Unpack[ListenerSettings],
) -> ChildSpec:
    """Return the child spec of one HTTP listener (see the module docstring).

    ``on_started`` is called with the listener's URLs and manager each time it (re)starts.
    """
    options = settings.get("options") or HttpOptions()
    host = settings.get("host", "127.0.0.1")
    port = settings.get("port", 0)
    limits = settings.get("limits")
    session_options = settings.get("session_options")
    store = settings.get("store")
    if store is None and options.resumable:
        store = MemoryEventStore(
            max_events_per_stream=options.max_events_per_stream,
            ttl=options.event_ttl,
            max_bytes=options.max_event_store_bytes,
        )
    chosen_store = store
    per_session = session_options or getattr(handler, "session_options", None) or SessionOptions()
    holder: list[SessionManager] = []

    def build_manager() -> SessionManager:
        manager = SessionManager(handler, per_session, limits)
        holder[:] = [manager]
        return manager

    connections = settings.get("connections") or H1Settings()
    engine = settings.get("engine", "trimcp")
    if engine not in ENGINES:
        raise ValueError(f"unknown HTTP engine {engine!r}; choose one of {', '.join(ENGINES)}")

    async def listen(task_status: trio.TaskStatus[object] = trio.TASK_STATUS_IGNORED) -> None:
        manager = holder[0]
        app = McpHttpApp(
            manager, options, chosen_store, max_message_size=per_session.max_message_size
        )
        # Marked unbound when the server stops, however it stops (its sockets are closed).
        started: list[HttpListener] = []
        try:
            async with _verifier_closed(options.auth), trio.open_nursery() as nursery:
                if engine == "hypercorn":
                    config = _hypercorn_config(host, port)
                    # hypercorn refuses larger WebSocket messages itself (1009).
                    config.websocket_max_message_size = per_session.max_message_size
                    try:
                        binds = typing.cast("list[str]", await nursery.start(serve, app, config))
                    # hypercorn binds inside nurseries of its own: the OSError comes in a group.
                    except* OSError as group:
                        raise _cannot_listen(_first(group), host, port) from group
                else:
                    h1 = dataclasses.replace(
                        connections,
                        max_message_size=per_session.max_message_size,
                        # The chunked bytes on the wire: the body limit plus room for framing.
                        max_body_size=options.max_body_size + _FRAMING_ALLOWANCE,
                    )
                    binds = await _start_h1(nursery, app, host, port, h1)
                urls = [bind.rstrip("/") + options.path for bind in binds]
                logger.info("MCP over Streamable HTTP at %s", ", ".join(urls))
                listener = HttpListener(urls, manager, chosen_store, app=app)
                started.append(listener)
                if on_started is not None:
                    on_started(listener)
                task_status.started(listener)
        finally:
            if started:
                started[0].bound = False

    children = [
        ChildSpec.for_actor("session-manager", build_manager),
        ChildSpec("http-listener", listen),
    ]
    return supervisor_spec("http", children, strategy="rest_for_one", intensity=3, period=10.0)


async def _start_h1(
    nursery: trio.Nursery, app: McpHttpApp, host: str, port: int, settings: H1Settings
) -> list[str]:
    """Bind ``host:port``, serve ``app`` with ``serve_h1``; return the bound base URLs."""
    try:
        listeners = await trio.open_tcp_listeners(port, host=host)
    except OSError as exc:
        raise _cannot_listen(exc, host, port) from exc
    await nursery.start(functools.partial(serve_h1, app, listeners, settings=settings))
    binds = []
    for listener in listeners:
        address, bound_port = listener.socket.getsockname()[:2]
        shown = f"[{address}]" if ":" in address else address
        binds.append(f"http://{shown}:{bound_port}")
    return binds


@contextlib.asynccontextmanager
async def _verifier_closed(auth: ResourceServer | None) -> AsyncIterator[None]:
    """Close the token verifier's HTTP client when the listener stops (``HttpOptions.auth``).

    Shielded: closing idle connections is quick, and a cancelled stop must not leave them.
    """
    try:
        yield
    finally:
        if auth is not None:
            with trio.CancelScope(shield=True):
                await auth.aclose()


def _cannot_listen(exc: OSError, host: str, port: int) -> OSError:
    """Return ``exc`` worded ``cannot listen on HOST:PORT: reason``, its errno kept.

    The OS's own message ("Address already in use") does not say which address; whoever
    reports it (``trimcp serve``, ``run_http``, a log line) then needs no other context.
    """
    shown = f"[{host}]" if ":" in host else host
    return OSError(exc.errno, f"cannot listen on {shown}:{port}: {exc.strerror or exc}")


def _first(group: BaseExceptionGroup[OSError]) -> OSError:
    first = group.exceptions[0]
    return first if isinstance(first, OSError) else _first(first)


async def serve_http(
    handler: RequestHandler,
    *,
    task_status: trio.TaskStatus[HttpListener] = trio.TASK_STATUS_IGNORED,
    **settings: typing.Unpack[ListenerSettings],
) -> None:
    """Serve ``handler`` over Streamable HTTP until cancelled.

    Binds ``host:port`` (127.0.0.1 and a free port by default; see ``ListenerSettings``)
    and reports the listener (its URLs and session manager) through ``task_status``:
    ``listener = await nursery.start(functools.partial(serve_http, server))``.
    """
    listeners: list[HttpListener] = []
    spec = http_listener_spec(handler, on_started=listeners.append, **settings)
    async with open_supervisor([spec]) as supervisor:
        task_status.started(listeners[-1])
        await supervisor.wait_exited()
