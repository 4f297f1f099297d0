"""``Gateway``: one MCP server fronting many backends, each kept connected under supervision.

::

    gateway                    Supervisor, rest_for_one
    ├── <name>.host            the ConnectionManager's subtree: one Connection per backend
    ├── catalog                re-reads the backends' catalogs when one changes and tells
    │                          the gateway's sessions ``notifications/*/list_changed``
    └── parked                 the backend calls of 2026-07-28 callers, which wait for
                               their callers' input between requests (``_parked.py``)

Backends are upstream servers (``[upstreams]``/``mcpServers``: a process, HTTP or WebSocket)
and local servers (the built-in tools, the ``[server] object``) reached in memory
(``_local.py``); all go through the same ``Connection`` actors, so a crash is restarted with
backoff whatever the backend. Either side may speak MCP 2025-11-25 (sessions) or 2026-07-28
(per-request): a backend as the gateway's ``ClientSession`` to it found out (``_backend.py``),
a downstream client per request (``_modern.py``). This class is the ``RequestHandler`` that
ties the parts together (MCP 2025-11-25, https://modelcontextprotocol.io/specification/2025-11-25/server):

* ``_view.py``: what is offered and how it is named;
* ``_catalog.py``: the view kept fresh, ``list_changed``, ``*/list`` pages;
* ``_routing.py``: requests to the backend that offers what they name, progress and
  cancellation, a backend's failure as an ``isError`` result naming it;
* ``_subscriptions.py``: ``resources/subscribe`` reference-counted per (backend, URI),
  restored when a backend reconnects;
* ``_logs.py``: the backends' log messages relayed, filtered by each recipient's level;
* ``_relay.py``: a backend's sampling, elicitation and roots requests made while serving a
  call go to the client of that call (the rule and its limits are there);
* ``_parked.py``: for a 2026-07-28 client, as an ``InputRequiredResult``, the backend call
  waiting in between (bounded by ``[gateway] max_parked_calls`` and ``parked_call_ttl``).

Not yet: notifications go to each session directly (no ``NotificationHub``).
"""

from __future__ import annotations

import dataclasses
import logging
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, final

from trimcp.client import (
    BackoffPolicy,
    ClientConfig,
    ConnectionManager,
    ServerConfig,
    connect_upstream,
)
from trimcp.config import GatewaySettings
from trimcp.errors import MethodNotFound
from trimcp.protocol import Implementation, ServerCapabilities, header_parameters
from trimcp.server import MCPServer, TaskCounts
from trimcp.supervision import ChildSpec, open_supervisor, supervisor_spec

from ._catalog import LISTS, Catalog
from ._local import IN_PROCESS, local_config, open_local
from ._logs import LogRelay, set_level
from ._modern import ModernGateway
from ._parked import ParkedCalls, ParkedStatistics
from ._relay import InFlight, SessionCaller, client_handlers
from ._reload import ReloadReport, reload_gateway
from ._routing import Router
from ._subscriptions import Subscriptions

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping, Sequence
    from contextlib import AbstractAsyncContextManager

    import trio

    from trimcp.actors import Registry
    from trimcp.client import CatalogKind, ClientSessionOptions, Upstream
    from trimcp.protocol import JsonObject, Notification, Request
    from trimcp.sessions import RequestContext, RequestHandler, SessionHandle

    from ._relay import Caller
    from ._view import View

__all__ = ["Gateway"]

logger = logging.getLogger(__name__)


@final
class Gateway:
    """One MCP server over many backends (module docstring); a ``RequestHandler``.

    Args:
        upstreams: the upstream servers, in order (an ``mcpServers`` configuration).
        local: ``(name, server)`` of in-process backends, listed before the upstreams; an
            upstream with the same name as a local backend is left out (warned).
        settings: naming and filtering (``[gateway]``).
        name, version: the gateway's ``serverInfo``.
        backoff: restart delays and intensity of every backend's connection.
        page_size: items per ``*/list`` page.
        registry: where the connection manager registers its parts (default: the run's).
        local_options: the client session options of local backends, by name (default:
            ``ClientSessionOptions()``, which speaks each backend's newest era; a
            ``protocol_version`` of the handshake era forces ``initialize``).
    """

    def __init__(  # noqa: PLR0913  # each is one independent choice of the embedder
        self,
        upstreams: ClientConfig | Mapping[str, ServerConfig] = (),  # type: ignore[assignment]
        *,
        local: Sequence[tuple[str, RequestHandler]] = (),
        settings: GatewaySettings | None = None,
        name: str = "trimcp-gateway",
        version: str = "0.1.0",
        backoff: BackoffPolicy | None = None,
        page_size: int = 50,
        registry: Registry | None = None,
        local_options: Mapping[str, ClientSessionOptions] | None = None,
    ) -> None:
        servers = dict(upstreams.servers if isinstance(upstreams, ClientConfig) else upstreams)
        self._local: dict[str, RequestHandler] = dict(local)
        self._local_options = dict(local_options or {})
        ordered: dict[str, ServerConfig] = {name: local_config(name) for name in self._local}
        for server, config in servers.items():
            if server in ordered:
                logger.warning("upstream %r is left out: a built-in backend has that name", server)
                continue
            ordered[server] = config
        self._info = Implementation(name=name, version=version)
        self.manager = ConnectionManager(
            connector=self._connect,
            name=f"{name}.gateway",
            registry=registry,
            backoff=backoff or BackoffPolicy(),
            on_change=self._changed,
        )
        self._sessions: set[SessionHandle] = set()
        listeners: set[SessionHandle] = set()  # which of the sessions are listen streams
        self._catalog = Catalog(
            self.manager, ordered, settings or GatewaySettings(), self._sessions, page_size
        )
        self._inflight = InFlight()
        self._logs = LogRelay(self._sessions, listeners, self._inflight)
        self._router = Router(self.manager, self._catalog, self._inflight, self._logs)
        self._subscribers = Subscriptions(self._router)
        self._parked = ParkedCalls(self._parked_limits)
        self._modern = ModernGateway(
            self._info, self._sessions, listeners, self._subscribers, self._parked
        )

    # --- what runs --------------------------------------------------------------------------

    @property
    def backends(self) -> tuple[str, ...]:
        """Every backend's name, in order (local ones first)."""
        return tuple(self._servers)

    @property
    def view(self) -> View:
        """What is offered now."""
        return self._catalog.view

    def task_counts(self) -> TaskCounts:
        """The tasks the in-process backends hold now (the built-in tools, the ``[server]
        object``); an upstream's own tasks live in its process and are not counted."""
        total = TaskCounts()
        for server in self._local.values():
            if isinstance(server, MCPServer):
                total += server.task_counts()
        return total

    def transport_of(self, backend: str) -> str | None:
        """How a backend is reached: ``stdio``, ``http``, ``websocket`` or ``in-process``."""
        config = self._servers.get(backend)
        if config is None:
            return None
        if backend in self._local and config.command == IN_PROCESS:
            return "in-process"
        return config.transport

    def subscription_count(self, session: SessionHandle) -> int:
        """Resources ``session`` is subscribed to through the gateway (read-only look)."""
        return sum(1 for members in self._subscriptions.values() if session in members)

    def parked_calls(self) -> ParkedStatistics:
        """The backend calls of 2026-07-28 callers: running, and parked for their input."""
        return self._parked.statistics()

    def spec(self) -> ChildSpec:
        """The gateway's subtree (module docstring), to put before the listeners."""
        children = [
            self.manager.spec(self._servers),
            ChildSpec("catalog", self._catalog.run),
            ChildSpec("parked", self._parked.run),
        ]
        return supervisor_spec(
            "gateway", children, strategy="rest_for_one", intensity=3, period=10.0
        )

    @asynccontextmanager
    async def open(self) -> AsyncIterator[Gateway]:
        """Run ``spec()`` for the ``async with`` block (tests, embedding)."""
        async with open_supervisor([self.spec()]):
            yield self

    async def wait_settled(self) -> View:
        """Wait for every backend's current connection attempt to settle; return the view."""
        for server, config in self._servers.items():
            if config.enabled and config.auto_connect:
                await self.manager.connect(server)
        await self._catalog.rebuild()
        return self._catalog.view

    async def reload(
        self, upstreams: ClientConfig | Mapping[str, ServerConfig], settings: GatewaySettings
    ) -> ReloadReport:
        """Apply new upstreams and ``[gateway]`` settings while running (``_reload.py``)."""
        return await reload_gateway(self, upstreams, settings)

    # --- what a reload changes (``_reload.Reloadable``): the parts' state, by its old names ---

    @property
    def _servers(self) -> dict[str, ServerConfig]:
        return dict(self._catalog.servers)

    @_servers.setter
    def _servers(self, servers: dict[str, ServerConfig]) -> None:
        self._catalog.servers = servers

    @property
    def _settings(self) -> GatewaySettings:
        return self._catalog.settings

    @_settings.setter
    def _settings(self, settings: GatewaySettings) -> None:
        self._catalog.settings = settings

    @property
    def _clashes_logged(self) -> set[tuple[str, str]]:
        return self._catalog.clashes_logged

    @_clashes_logged.setter
    def _clashes_logged(self, logged: set[tuple[str, str]]) -> None:
        self._catalog.clashes_logged = logged

    @property
    def _subscriptions(self) -> dict[tuple[str, str], set[SessionHandle]]:
        return self._subscribers.members

    @_subscriptions.setter
    def _subscriptions(self, members: dict[tuple[str, str], set[SessionHandle]]) -> None:
        self._subscribers.members = members

    @property
    def _dirty(self) -> trio.Event:
        return self._catalog.dirty

    @_dirty.setter
    def _dirty(self, event: trio.Event) -> None:
        self._catalog.dirty = event

    async def _rebuild(self) -> None:
        await self._catalog.rebuild()

    def _parked_limits(self) -> tuple[int, float]:
        settings = self._catalog.settings
        return settings.max_parked_calls, settings.parked_call_ttl

    def _changed(self, server: str) -> None:
        """A backend's connection changed state or catalog (called in its actor's task)."""
        self._catalog.mark_dirty()

    # --- connecting backends ------------------------------------------------------------------

    def _connect(
        self, config: ServerConfig, on_list_changed: Callable[[CatalogKind], None]
    ) -> AbstractAsyncContextManager[Upstream]:
        backend = config.name
        handlers = dataclasses.replace(
            client_handlers(backend, self._inflight),
            on_log=lambda message: self._logs.relay(backend, message),
            on_resource_updated=lambda uri: self._subscribers.relay_updated(backend, uri),
        )
        local = self._local.get(backend)
        if local is not None and config.command == IN_PROCESS:
            watched = dataclasses.replace(
                handlers,
                on_tools_changed=lambda: on_list_changed("tools"),
                on_resources_changed=lambda: on_list_changed("resources"),
                on_prompts_changed=lambda: on_list_changed("prompts"),
            )
            options = self._local_options.get(backend)
            return self._restoring(backend, open_local(local, watched, options))
        return self._restoring(
            backend, connect_upstream(config, on_list_changed, handlers=handlers)
        )

    @asynccontextmanager
    async def _restoring(
        self, backend: str, connecting: AbstractAsyncContextManager[Upstream]
    ) -> AsyncIterator[Upstream]:
        """``connecting``, with the subscriptions in use restored on the new connection, and
        known to the router while it lasts (``Router.live``)."""
        async with connecting as upstream:
            await self._subscribers.restore(backend, upstream)
            self._router.live[backend] = upstream
            try:
                yield upstream
            finally:
                if self._router.live.get(backend) is upstream:
                    del self._router.live[backend]

    # --- RequestHandler -----------------------------------------------------------------------

    @property
    def server_info(self) -> Implementation:
        """The gateway's ``serverInfo``."""
        return self._info

    @property
    def capabilities(self) -> ServerCapabilities:
        """Everything a backend may offer: backends come and go during a session's life."""
        return ServerCapabilities(
            tools=True,
            tools_list_changed=True,
            resources=True,
            resources_subscribe=True,
            resources_list_changed=True,
            prompts=True,
            prompts_list_changed=True,
            completions=True,
            logging=True,
        )

    @property
    def instructions(self) -> str | None:
        """None: each backend's own instructions describe only its part."""
        return None

    async def handle_request(self, request: Request, context: RequestContext) -> JsonObject:
        """Answer one request (module docstring); a 2026-07-28 one as ``_modern.py`` says."""
        if context.session.request_meta is not None:
            return await self._modern.handle(request, context, self.capabilities, self._serve)
        return await self._serve(request, context, SessionCaller(context))

    async def _serve(  # noqa: PLR0911  # one return per method family
        self, request: Request, context: RequestContext, caller: Caller
    ) -> JsonObject:
        """Answer what both eras share; the backend's asks go to ``caller``."""
        method = request.method
        params = dict(request.params or {})
        if method in LISTS:
            return self._catalog.page(method, params)
        if method == "tools/call":
            return await self._router.call_tool(params, caller)
        if method == "prompts/get":
            return await self._router.get_prompt(params, caller)
        if method == "resources/read":
            return await self._router.read_resource(params, caller)
        if method in ("resources/subscribe", "resources/unsubscribe"):
            return await self._subscribers.handle(method, params, context.session)
        if method == "completion/complete":
            return await self._router.complete(params, caller)
        if method == "logging/setLevel":
            return set_level(params, context)
        raise MethodNotFound(method)

    def header_parameters(self, tool: str) -> Mapping[tuple[str, ...], str] | None:
        """The ``Mcp-Param-*`` headers a 2026-07-28 call of ``tool`` mirrors, from the
        input schema its backend declared; None for a tool not offered now."""
        route = self._catalog.view.tools.get(tool)
        schema = None if route is None else route.item.get("inputSchema")
        return (
            None if route is None else header_parameters(schema if isinstance(schema, dict) else {})
        )

    async def handle_notification(self, notification: Notification, session: SessionHandle) -> None:
        """Nothing to do: a client's roots are asked per call (``_relay.py``)."""
        logger.debug("gateway session %s: %s", session.session_id, notification.method)

    def session_opened(self, session: SessionHandle) -> None:
        """Track a session for list_changed, log relay and subscriptions."""
        self._sessions.add(session)

    def session_closed(self, session: SessionHandle) -> None:
        """Forget a session and its subscriptions (the backend stays subscribed)."""
        self._sessions.discard(session)
        self._subscribers.forget(session)
