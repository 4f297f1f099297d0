"""``Gateway``: one MCP server fronting many backends, each kept connected under supervision.

::

    gateway                    Supervisor, rest_for_one
    ├── <name>.host            the ConnectionManager's subtree: one Connection per backend
    └── catalog                re-reads the backends' catalogs when one changes and tells
                               the gateway's sessions ``notifications/*/list_changed``

Backends are upstream servers (``[upstreams]``/``mcpServers``: a process, HTTP or WebSocket)
and local servers (the built-in tools, the ``[server] object``) reached in memory
(``_local.py``); all go through the same ``Connection`` actors, so a crash is restarted with
backoff whatever the backend. What is offered and how it is named is ``_view.py``'s.

Requests (MCP 2025-11-25, https://modelcontextprotocol.io/specification/2025-11-25/server):

* ``*/list`` pages the merged view with ``trimcp.server.Paginator`` (Pagination: cursors are
  opaque; a cursor from before a change is refused rather than skipping items);
* ``tools/call``, ``prompts/get``, ``resources/read``, ``completion/complete`` go to the
  backend's live ``ClientSession`` with the backend's own name put back. Progress from the
  backend is relayed to the downstream request (Utilities > Progress); cancelling the
  downstream request cancels the task awaiting the backend, and the client session then
  sends ``notifications/cancelled`` upstream (Utilities > Cancellation).
* A backend that dies with a call in flight: the call's ``ConnectionLost`` (exit status and
  stderr tail of a process, in its message) becomes a ``CallToolResult`` with ``isError``
  naming the backend (Tools > Error Handling: tool execution errors are results, so the
  model sees them); never a hang nor an empty success. A call to a backend not connected
  now gets the same kind of result with the connection's state and last error.
* ``resources/subscribe`` is reference-counted per (backend, URI): the backend is
  subscribed for the first downstream session and its ``notifications/resources/updated``
  go to every subscribed session. A backend that reconnects forgets its subscriptions.
* The backends' log messages are relayed to every session whose ``logging/setLevel`` lets
  them through, with the backend's name as ``logger``.

Not yet: server-to-client requests of a backend (sampling, elicitation, roots) are not
relayed (the backend sees a client without those capabilities), and notifications go to
each session directly (no ``NotificationHub``).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, final

import trio

from trimcp.client import (
    BackoffPolicy,
    ClientConfig,
    ClientHandlers,
    ConnectionManager,
    ServerConfig,
    SessionUpstream,
    connect_upstream,
)
from trimcp.config import GatewaySettings
from trimcp.errors import (
    InvalidParams,
    MethodNotFound,
    NotConnected,
    RequestTimeout,
    ResourceNotFound,
    TransportBroken,
    TransportClosed,
    UnknownServer,
)
from trimcp.protocol import Implementation, ServerCapabilities
from trimcp.server import CursorCodec, Paginator, snapshot_of
from trimcp.sessions import LOG_LEVELS
from trimcp.supervision import ChildSpec, open_supervisor, supervisor_spec

from ._local import IN_PROCESS, local_config, open_local
from ._view import Route, View, build_view

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Sequence
    from contextlib import AbstractAsyncContextManager

    from trimcp.actors import Registry
    from trimcp.client import CatalogKind, LogMessage, Progress, Upstream
    from trimcp.protocol import JsonObject, Notification, Request
    from trimcp.sessions import RequestContext, RequestHandler, SessionHandle

__all__ = ["Gateway"]

logger = logging.getLogger(__name__)

_LIST_CHANGED = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}


#: ``*/list`` methods: the result's key and the ``View`` table listed.
_LISTS = {
    "tools/list": ("tools", "tools"),
    "prompts/list": ("prompts", "prompts"),
    "resources/list": ("resources", "resources"),
    "resources/templates/list": ("resourceTemplates", "templates"),
}


def _set_level(params: JsonObject, context: RequestContext) -> JsonObject:
    """``logging/setLevel``: the session filters the relayed log messages by it."""
    try:
        context.session.set_log_level(str(params.get("level")))
    except ValueError as exc:
        raise InvalidParams(str(exc), {"level": params.get("level")}) from exc
    return {}


def _error_result(text: str) -> JsonObject:
    return {"content": [{"type": "text", "text": text}], "isError": True}


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
    ) -> None:
        servers = dict(upstreams.servers if isinstance(upstreams, ClientConfig) else upstreams)
        self._local: dict[str, RequestHandler] = dict(local)
        ordered: dict[str, ServerConfig] = {name: local_config(name) for name in self._local}
        for server, config in servers.items():
            if server in ordered:
                logger.warning("upstream %r is left out: a built-in backend has that name", server)
                continue
            ordered[server] = config
        self._servers = ordered
        self._settings = settings or GatewaySettings()
        self._info = Implementation(name=name, version=version)
        self._paginator = Paginator(CursorCodec(), page_size)
        self.manager = ConnectionManager(
            connector=self._connect,
            name=f"{name}.gateway",
            registry=registry,
            backoff=backoff or BackoffPolicy(),
            on_change=self._changed,
        )
        self._view = View()
        self._dirty = trio.Event()
        self._sessions: set[SessionHandle] = set()
        self._subscriptions: dict[tuple[str, str], set[SessionHandle]] = {}
        self._clashes_logged: set[tuple[str, str]] = set()

    # --- what runs --------------------------------------------------------------------------

    @property
    def backends(self) -> tuple[str, ...]:
        """Every backend's name, in order (local ones first)."""
        return tuple(self._servers)

    @property
    def view(self) -> View:
        """What is offered now."""
        return self._view

    def spec(self) -> ChildSpec:
        """The gateway's subtree (module docstring), to put before the listeners."""
        children = [
            self.manager.spec(self._servers),
            ChildSpec("catalog", self._run),
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
        await self._rebuild()
        return self._view

    async def _run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        for server, config in self._servers.items():
            if config.enabled and config.auto_connect:
                await self.manager.start_connecting(server)
        await self._rebuild()
        task_status.started()
        while True:
            await self._dirty.wait()
            self._dirty = trio.Event()
            await self._rebuild()

    def _changed(self, server: str) -> None:
        """A backend's connection changed state or catalog (called in its actor's task)."""
        self._dirty.set()

    async def _rebuild(self) -> None:
        live = dict(await self.manager.live_catalogs())
        ordered = [(server, live[server]) for server in self._servers if server in live]
        new = build_view(self._settings, ordered)
        old, self._view = self._view, new
        for clash in new.clashes:
            if clash not in self._clashes_logged:
                self._clashes_logged.add(clash)
                logger.warning(
                    "gateway: %r of backend %r is hidden: an earlier backend offers the same"
                    " name (see [gateway] namespace and prefixes)",
                    *clash,
                )
        changed = [
            kind
            for kind, before, after in (
                ("tools", old.tools, new.tools),
                ("prompts", old.prompts, new.prompts),
                (
                    "resources",
                    {**old.resources, **old.templates},
                    {**new.resources, **new.templates},
                ),
            )
            if before != after
        ]
        if not changed:
            return
        logger.info(
            "gateway offers %d tools, %d prompts, %d resources (%d templates) from %s",
            len(new.tools),
            len(new.prompts),
            len(new.resources),
            len(new.templates),
            ", ".join(server for server, _ in ordered) or "no connected backend",
        )
        for kind in changed:
            for session in list(self._sessions):
                if session.open:
                    session.notify_nowait(_LIST_CHANGED[kind])

    # --- connecting backends ------------------------------------------------------------------

    def _connect(
        self, config: ServerConfig, on_list_changed: Callable[[CatalogKind], None]
    ) -> AbstractAsyncContextManager[Upstream]:
        backend = config.name
        handlers = ClientHandlers(
            on_log=lambda message: self._relay_log(backend, message),
            on_resource_updated=lambda uri: self._relay_updated(backend, uri),
        )
        local = self._local.get(backend)
        if local is not None and config.command == IN_PROCESS:
            watched = dataclasses.replace(
                handlers,
                on_tools_changed=lambda: on_list_changed("tools"),
                on_resources_changed=lambda: on_list_changed("resources"),
                on_prompts_changed=lambda: on_list_changed("prompts"),
            )
            return open_local(local, watched)
        return connect_upstream(config, on_list_changed, handlers=handlers)

    def _relay_log(self, backend: str, message: LogMessage) -> None:
        level = message.level if message.level in LOG_LEVELS else "info"
        params: JsonObject = {"level": level, "logger": backend, "data": message.data}  # type: ignore[dict-item]
        for session in list(self._sessions):
            wanted = session.log_level
            if wanted is not None and LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
                continue
            if session.open:
                session.notify_nowait("notifications/message", params)

    def _relay_updated(self, backend: str, uri: str) -> None:
        for session in list(self._subscriptions.get((backend, uri), ())):
            if session.open:
                session.notify_nowait("notifications/resources/updated", {"uri": uri})

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

    async def handle_request(  # noqa: PLR0911  # one return per method family
        self, request: Request, context: RequestContext
    ) -> JsonObject:
        """Answer one request (module docstring)."""
        method = request.method
        params = dict(request.params or {})
        listed = _LISTS.get(method)
        if listed is not None:
            key, attribute = listed
            return self._page(params, method, key, getattr(self._view, attribute))
        if method == "tools/call":
            return await self._call_tool(params, context)
        if method == "prompts/get":
            route = await self._route("prompts", params.get("name"))
            return await self._forward(route.backend, method, {**params, "name": route.name})
        if method == "resources/read":
            return await self._forward(self._resource_backend(params.get("uri")), method, params)
        if method in ("resources/subscribe", "resources/unsubscribe"):
            return await self._subscription(method, params, context.session)
        if method == "completion/complete":
            return await self._complete(params)
        if method == "logging/setLevel":
            return _set_level(params, context)
        raise MethodNotFound(method)

    async def handle_notification(self, notification: Notification, session: SessionHandle) -> None:
        """Nothing to do: roots of a downstream client are not relayed (module docstring)."""
        logger.debug("gateway session %s: %s", session.session_id, notification.method)

    def session_opened(self, session: SessionHandle) -> None:
        """Track a session for list_changed, log relay and subscriptions."""
        self._sessions.add(session)

    def session_closed(self, session: SessionHandle) -> None:
        """Forget a session and its subscriptions (the backend stays subscribed)."""
        self._sessions.discard(session)
        for key in list(self._subscriptions):
            members = self._subscriptions[key]
            members.discard(session)
            if not members:
                del self._subscriptions[key]

    # --- requests -----------------------------------------------------------------------------

    def _page(
        self, params: JsonObject, method: str, key: str, table: Mapping[str, Route]
    ) -> JsonObject:
        cursor = params.get("cursor")
        page = self._paginator.page(
            list(table.values()),
            cursor if isinstance(cursor, str) else None,
            method=method,
            snapshot=snapshot_of(table),
        )
        result: JsonObject = {key: [route.item for route in page.items]}
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
        return result

    async def _route(self, kind: str, name: object) -> Route:
        if not isinstance(name, str):
            raise InvalidParams(f"{kind[:-1]} name missing", {"name": name})
        table = self._view.tools if kind == "tools" else self._view.prompts
        route = table.get(name)
        if route is None:
            # The view may lag a connection that just came up: read it afresh once.
            await self._rebuild()
            table = self._view.tools if kind == "tools" else self._view.prompts
            route = table.get(name)
        if route is None:
            raise InvalidParams(f"unknown {kind[:-1]}: {name!r}", {"name": name})
        return route

    def _resource_backend(self, uri: object) -> str:
        if not isinstance(uri, str):
            raise InvalidParams("uri missing", {"uri": uri})
        backend = self._view.resource_backend(uri)
        if backend is None:
            raise ResourceNotFound(uri)
        return backend

    async def _call_tool(self, params: JsonObject, context: RequestContext) -> JsonObject:
        route = await self._route("tools", params.get("name"))
        forwarded = {key: value for key, value in params.items() if key != "_meta"}
        forwarded["name"] = route.name
        meta = params.get("_meta")
        if isinstance(meta, Mapping):
            rest = {key: value for key, value in meta.items() if key != "progressToken"}
            if rest:
                forwarded["_meta"] = rest

        async def relay(progress: Progress) -> None:
            try:
                await context.report_progress(progress.progress, progress.total, progress.message)
            except Exception as exc:  # noqa: BLE001  (a backend's bad progress must not end the call)
                logger.debug("progress from %r not relayed: %s", route.backend, exc)

        on_progress = relay if context.progress_token is not None else None
        try:
            return await self._forward(route.backend, "tools/call", forwarded, on_progress)
        except NotConnected as exc:
            return _error_result(f"{route.name!r} cannot be called now: {exc}")
        except (TransportBroken, TransportClosed) as exc:
            return _error_result(
                f"MCP server {route.backend!r} failed while calling {route.name!r}: {exc}"
            )
        except RequestTimeout as exc:
            return _error_result(f"MCP server {route.backend!r} did not answer in time: {exc}")

    async def _forward(
        self,
        backend: str,
        method: str,
        params: JsonObject,
        on_progress: Callable[[Progress], object] | None = None,
    ) -> JsonObject:
        try:
            upstream = await self.manager.get_connection(backend)
        except UnknownServer as exc:
            raise NotConnected(str(exc), server=backend, state="stopped") from exc
        if isinstance(upstream, SessionUpstream):
            return await upstream.session.request(method, params, on_progress=on_progress)  # type: ignore[arg-type]
        if method == "tools/call":
            arguments = params.get("arguments")
            return await upstream.call_tool(
                str(params["name"]),
                dict(arguments) if isinstance(arguments, Mapping) else {},
                on_progress=on_progress,  # type: ignore[arg-type]
            )
        raise MethodNotFound(method)

    async def _subscription(
        self, method: str, params: JsonObject, session: SessionHandle
    ) -> JsonObject:
        uri = params.get("uri")
        backend = self._resource_backend(uri)
        assert isinstance(uri, str)
        key = (backend, uri)
        members = self._subscriptions.get(key)
        if method == "resources/subscribe":
            if members is None:
                await self._forward(backend, method, {"uri": uri})
                members = self._subscriptions[key] = set()
            members.add(session)
            return {}
        if members is not None:
            members.discard(session)
            if not members:
                del self._subscriptions[key]
                await self._forward(backend, method, {"uri": uri})
        return {}

    async def _complete(self, params: JsonObject) -> JsonObject:
        ref = params.get("ref")
        if not isinstance(ref, Mapping):
            raise InvalidParams("ref missing", {"ref": ref})
        if ref.get("type") == "ref/prompt":
            route = await self._route("prompts", ref.get("name"))
            forwarded = {**params, "ref": {**ref, "name": route.name}}
            return await self._forward(route.backend, "completion/complete", forwarded)
        uri = ref.get("uri")
        template = self._view.templates.get(uri) if isinstance(uri, str) else None
        backend = template.backend if template is not None else self._resource_backend(uri)
        return await self._forward(backend, "completion/complete", params)
