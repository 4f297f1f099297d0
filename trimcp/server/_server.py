"""``MCPServer``: the decorator API, and the ``RequestHandler`` that sessions call.

Registration (``@server.tool()``, ``@server.resource(uri)``, ``@server.prompt()``,
``@server.completion()`` and the ``add_*``/``remove_*`` methods) fills a ``Catalog``;
changes at runtime send ``notifications/{tools,resources,prompts}/list_changed`` to every
initialized session (``SessionSet.broadcast_soon``). Requests go through ``_dispatch``.

Notifications to many sessions (list_changed, ``notify_resource_updated``, server-wide
``log``) go through a ``NotificationHub`` when the server has one, else directly
(``_broadcast.py`` says how, and what happens to a session that does not keep up). The
runners below start one beside their listeners::

    supervisor (one_for_one)
    ├── notifications      rest_for_one: the task runner of the Tasks extension
    │                      (_tasks_ext_runner.py), the hub (trimcp.notify), then the Fanout
    │                      actor that subscribes the server's sessions to it (_fanout.py),
    │                      then the server's background children (``add_background``)
    └── listener(s)        HTTP / WebSocket / stdio, with their sessions

Started first and stopped last, so sessions never outlive it; ``one_for_one`` at the top, so a
hub that restarts takes no session with it (the server notifies directly meanwhile). The
daemon builds the same tree under its application (``trimcp.daemon``); embedded code can add
``server.notification_spec()`` to its own tree or use ``server.open_notifications()``.

Capabilities are computed when a session starts and fixed for its life (the protocol
allows no renegotiation), and built once per change of the catalog, not per session:
``tools`` (with ``listChanged``) and ``logging`` always;
``resources`` (``subscribe`` and ``listChanged``) and ``prompts`` (``listChanged``) only if
some are registered then; ``completions`` only with a completion handler. A session that
started without ``resources`` gets no resource notifications, even if resources appear
later. ``tasks`` (2025-11-25, experimental: ``list``, ``cancel`` and ``requests.tools.call``)
is declared when some tool allows task-augmented calls (``task_support``); older protocol
versions never see it. From 2026-07-28 on the same tools are offered as tasks of the
extension ``io.modelcontextprotocol/tasks`` instead (``server/discover``; ``_tasks_ext.py``).
"""

from __future__ import annotations

import functools
import logging
import sys
import typing
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TypedDict, Unpack

import trio

from trimcp.actors import Registry
from trimcp.http import http_listener_spec
from trimcp.notify import NotificationHub
from trimcp.protocol import (
    Implementation,
    ServerCapabilities,
    header_annotation_problems,
    header_parameters,
)
from trimcp.server._agent_skills import EXTENSION_ID as SKILLS_EXTENSION
from trimcp.server._agent_skills import SkillDirectory
from trimcp.server._broadcast import SessionSet
from trimcp.server._cache_hints import CacheHint, CachePolicy
from trimcp.server._catalog import Catalog
from trimcp.server._client_features import read_roots, require_capability
from trimcp.server._context import Context
from trimcp.server._dispatch import Call, dispatch
from trimcp.server._fanout import Fanout
from trimcp.server._modern import serve_modern
from trimcp.server._pagination import CursorCodec, Paginator
from trimcp.server._prompts import PromptEntry, PromptOptions
from trimcp.server._request_state import RequestStateSealer
from trimcp.server._resources import ResourceEntry, ResourceOptions
from trimcp.server._run import run_server
from trimcp.server._tasks import TaskCounts, TaskPolicy, TaskStore
from trimcp.server._tasks_ext import TasksExtension
from trimcp.server._tools import ToolEntry, ToolOptions
from trimcp.sessions import SessionOptions, serve_session, serve_stdio
from trimcp.supervision import ChildSpec, open_supervisor, supervisor_spec
from trimcp.transports import serve_websocket as transports_serve_websocket

if TYPE_CHECKING:
    import os
    from collections.abc import (
        AsyncIterator,
        Awaitable,
        Callable,
        Collection,
        Mapping,
        Sequence,
    )

    from trimcp.http import HttpListener, ListenerSettings
    from trimcp.protocol import JsonObject, JsonValue, Notification, Request, Root
    from trimcp.server._completion import CompletionHandler
    from trimcp.server._tasks_ext_store import TasksExtensionPolicy
    from trimcp.sessions import RequestContext, SessionHandle
    from trimcp.transports import WebSocketServerInfo, WebSocketStream

__all__ = ["MCPServer", "MCPServerOptions"]

logger = logging.getLogger(__name__)

F = typing.TypeVar("F", bound="Callable[..., object]")
NotificationHook = typing.Callable[["SessionHandle", "JsonObject"], typing.Awaitable[None]]
H = typing.TypeVar("H", bound=NotificationHook)


class MCPServerOptions(TypedDict, total=False):
    """Keyword options of ``MCPServer``.

    ``page_size`` (default 50) is the length of each ``*/list`` page; ``legacy_aliases``
    accepts ``list_tools``/``call_tool`` method names (``SessionOptions``); ``task_policy``
    bounds the tasks each session may hold (``TaskPolicy``). For 2026-07-28 requests:
    ``request_state`` seals the ``requestState`` of multi round-trip calls (default: a key
    of this process's own, 10-minute states; servers behind one balancer must share keys,
    ``RequestStateSealer(RequestStateKeys.from_file(...))``), and ``cache_hints`` overrides
    the ``ttlMs``/``cacheScope`` of cacheable results by method (``CacheHint``), and
    ``tasks_extension`` bounds the tasks of the Tasks extension and says when a call becomes
    one (``TasksExtensionPolicy``).
    """

    title: str
    instructions: str
    website_url: str
    icons: Sequence[Mapping[str, object]]
    page_size: int
    legacy_aliases: bool
    task_policy: TaskPolicy
    request_state: RequestStateSealer
    cache_hints: Mapping[str, CacheHint]
    tasks_extension: TasksExtensionPolicy


@typing.final
class MCPServer:
    """An MCP server built from decorated functions; a ``trimcp.sessions.RequestHandler``.

    Example::

        server = MCPServer("notes")

        @server.tool()
        async def add(a: int, b: int) -> int:
            \"\"\"Add two numbers.\"\"\"
            return a + b

        server.run_stdio()
    """

    def __init__(
        self, name: str, version: str = "0.1.0", **options: Unpack[MCPServerOptions]
    ) -> None:
        icons = tuple(dict(icon) for icon in options.get("icons", ()))
        self._info = Implementation(
            name=name,
            version=version,
            title=options.get("title"),
            website_url=options.get("website_url"),
            icons=typing.cast("tuple[JsonObject, ...]", icons),
        )
        self._instructions = options.get("instructions")
        self._legacy_aliases = options.get("legacy_aliases", False)
        self._paginator = Paginator(CursorCodec(), options.get("page_size", 50))
        self._catalog = Catalog()
        self._capabilities: ServerCapabilities | None = None
        self._sessions = SessionSet()
        self._tasks = TaskStore(options.get("task_policy"))
        self._tasks_ext = TasksExtension(options.get("tasks_extension"))
        self._notification_hooks: dict[str, list[NotificationHook]] = {}
        self._background: list[ChildSpec] = []
        self._sealer = options.get("request_state") or RequestStateSealer()
        self._cache = CachePolicy(options.get("cache_hints"))
        # Tool name -> (its entry, its mirrored headers), computed on first use per entry.
        self._headers: dict[str, tuple[ToolEntry, dict[tuple[str, ...], str]]] = {}

    # --- RequestHandler ---------------------------------------------------------------------

    @property
    def server_info(self) -> Implementation:
        """Name, version, title, website and icons sent as ``serverInfo``."""
        return self._info

    @property
    def instructions(self) -> str | None:
        """The ``instructions`` hint for the client's model."""
        return self._instructions

    @property
    def capabilities(self) -> ServerCapabilities:
        """What a session starting now declares (see the module docstring)."""
        capabilities = self._capabilities
        if capabilities is None:
            capabilities = self._capabilities = self._derive_capabilities()
        return capabilities

    def _derive_capabilities(self) -> ServerCapabilities:
        catalog = self._catalog
        skills = catalog.skills
        resources = bool(catalog.resources or catalog.templates or skills)
        prompts = bool(catalog.prompts)
        tasks = any(tool.task_support != "forbidden" for tool in catalog.tools.values())
        extensions: JsonObject = {}
        if skills is not None:
            extensions[SKILLS_EXTENSION] = skills.capability
        return ServerCapabilities(
            tools=True,
            tools_list_changed=True,
            resources=resources,
            resources_subscribe=resources,
            resources_list_changed=resources,
            prompts=prompts,
            prompts_list_changed=prompts,
            completions=catalog.completion is not None,
            logging=True,
            tasks=tasks,
            tasks_list=tasks,
            tasks_cancel=tasks,
            tasks_tools_call=tasks,
            extra={"extensions": extensions} if extensions else {},
        )

    @property
    def session_options(self) -> SessionOptions:
        """The options sessions of this server should run with."""
        return SessionOptions(legacy_aliases=self._legacy_aliases)

    async def handle_request(self, request: Request, context: RequestContext) -> JsonObject:
        """Answer one request (``trimcp.sessions.RequestHandler``).

        A per-request (2026-07-28) request, one that came with its own ``_meta`` instead of
        a session, is served as ``_modern.py`` says.
        """
        if context.session.request_meta is not None:
            parts = (
                self._sessions,
                self._paginator,
                self._tasks,
                self._sealer,
                self._cache,
                self._tasks_ext,
            )
            return await serve_modern(self, self._catalog, request, context, parts)
        call = Call(
            Context(context, self._catalog.read_resource),
            self._sessions,
            self._paginator,
            context,
            self._tasks,
        )
        return await dispatch(self._catalog, request.method, request.params or {}, call)

    def header_parameters(self, tool: str) -> Mapping[tuple[str, ...], str] | None:
        """The ``Mcp-Param-*`` headers a 2026-07-28 call of ``tool`` mirrors (its schema's
        ``x-mcp-header`` annotations); None for an unknown tool."""
        entry = self._catalog.tools.get(tool)
        if entry is None:
            return None
        found = self._headers.get(tool)
        if found is None or found[0] is not entry:
            schema = entry.definition.get("inputSchema")
            # Checked when the tool was registered (add_tool), so this does not raise.
            found = (entry, header_parameters(schema if isinstance(schema, dict) else {}))
            self._headers[tool] = found
        return found[1]

    async def handle_notification(self, notification: Notification, session: SessionHandle) -> None:
        """Run the hooks registered for a client notification (``on_notification``)."""
        hooks = self._notification_hooks.get(notification.method, ())
        if not hooks:
            logger.debug("session %s: %s", session.session_id, notification.method)
        for hook in hooks:
            try:
                await hook(session, notification.params or {})
            except Exception as exc:
                # One failing hook must not keep the others from running.
                logger.error(
                    "session %s: hook for %s failed",
                    session.session_id,
                    notification.method,
                    exc_info=exc,
                )

    def task_counts(self) -> TaskCounts:
        """How many tasks this server holds now, both kinds together (a read, for status).

        The 2025-11-25 tasks of every session (``params.task``), and those of the Tasks
        extension of 2026-07-28 (``TasksExtensionPolicy``, whose ``max_tasks`` is ``limit``).
        """
        kept, running = self._tasks.counts()
        extension = self._tasks_ext.statistics()
        return TaskCounts(
            kept=kept + extension.kept,
            running=running + extension.running,
            limit=self._tasks_ext.policy.max_tasks,
        )

    def session_opened(self, session: SessionHandle) -> None:
        """Track a session for broadcasts and subscriptions."""
        self._sessions.opened(session)

    def session_closed(self, session: SessionHandle) -> None:
        """Forget a session, its subscriptions and its tasks."""
        self._sessions.closed(session)
        self._tasks.session_closed(session)

    def _changed(self, method: str) -> None:
        """The catalog changed: declare afresh to new sessions; tell the open ones."""
        self._capabilities = None
        self._sessions.broadcast_soon(method)

    # --- tools ------------------------------------------------------------------------------

    def tool(self, name: str | None = None, **options: Unpack[ToolOptions]) -> Callable[[F], F]:
        """Register the decorated function as a tool (see ``add_tool``)."""

        def register(fn: F) -> F:
            self.add_tool(fn, name, **options)
            return fn

        return register

    def add_tool(
        self, fn: Callable[..., object], name: str | None = None, **options: Unpack[ToolOptions]
    ) -> None:
        """Register ``fn`` as a tool named ``name`` (default: the function's name).

        The input schema comes from the type hints, the description from the docstring.
        Arguments are validated and converted before each call; a ``Context`` parameter is
        injected. Open sessions get ``notifications/tools/list_changed``.

        Raises:
            ValueError: the name is taken or breaks the tool-name rules.
            SchemaError: a hint cannot be described.
        """
        entry = ToolEntry(fn, name, options)
        if entry.name in self._catalog.tools:
            raise ValueError(f"a tool named {entry.name!r} is already registered")
        schema = entry.definition.get("inputSchema")
        problems = header_annotation_problems(schema if isinstance(schema, dict) else {})
        if problems:
            raise ValueError(
                f"tool {entry.name!r}: its x-mcp-header annotations are invalid (MCP "
                f"2026-07-28 clients drop such a tool): {'; '.join(problems)}"
            )
        self._catalog.tools[entry.name] = entry
        self._changed("notifications/tools/list_changed")

    def remove_tool(self, name: str) -> None:
        """Unregister a tool and tell open sessions.

        Raises:
            KeyError: no such tool.
        """
        del self._catalog.tools[name]
        self._changed("notifications/tools/list_changed")

    # --- resources --------------------------------------------------------------------------

    def resource(self, uri: str, **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
        """Register the decorated function as a resource or template (see ``add_resource``)."""

        def register(fn: F) -> F:
            self.add_resource(fn, uri, **options)
            return fn

        return register

    def add_resource(
        self, fn: Callable[..., object], uri: str, **options: Unpack[ResourceOptions]
    ) -> None:
        """Register ``fn`` as the resource ``uri``, or as a template if ``uri`` has ``{}``.

        A template's function takes the template variables as keyword arguments (plus an
        optional ``Context``). Open sessions get ``notifications/resources/list_changed``.

        Raises:
            ValueError: the URI is taken, or the parameters are not the template variables.
            TemplateError: the template is malformed.
        """
        entry = ResourceEntry(uri, fn, options)
        table = self._catalog.resources if entry.template is None else self._catalog.templates
        if uri in table:
            raise ValueError(f"a resource {uri!r} is already registered")
        table[uri] = entry
        self._changed("notifications/resources/list_changed")

    def remove_resource(self, uri: str) -> None:
        """Unregister a resource or template and tell open sessions.

        Raises:
            KeyError: no such resource or template.
        """
        table = self._catalog.resources if uri in self._catalog.resources else None
        table = table if table is not None else self._catalog.templates
        del table[uri]
        self._changed("notifications/resources/list_changed")

    async def notify_resource_updated(self, uri: str) -> int:
        """Send ``notifications/resources/updated`` to the sessions subscribed to ``uri``.

        Returns how many sessions it was sent to (with a hub: handed to; it waits only for
        room in the topic's broadcaster, never for a session).
        """
        return await self._sessions.resource_updated(uri)

    def subscribed_uris(self) -> Collection[str]:
        """Return the resource URIs some session is subscribed to now (a live view).

        For a watcher that sends ``notify_resource_updated``: what it should watch. A
        subscription ends with ``resources/unsubscribe`` or with its session.
        """
        return self._sessions.subscribed_uris()

    # --- Agent Skills (the io.modelcontextprotocol/skills extension) -------------------------

    def add_skills(
        self,
        directory: str | os.PathLike[str],
        *,
        max_file_size: int = 1 << 20,
        max_skills: int = 1000,
    ) -> None:
        """Serve the Agent Skills in ``directory`` (folders with a ``SKILL.md``).

        Per the Skills extension (SEP-2640, draft; ``io.modelcontextprotocol/skills``): each
        skill's files are ``skill://`` resources, listed by ``skills/list``, fetched with
        ``skills/get`` and browsed with ``resources/directory/read``; each ``SKILL.md`` is
        also in ``resources/list``. The folder is a jail: paths that leave it, symlinks out
        of it, devices and oversized files are refused. It is scanned now; call
        ``rescan_skills`` after changing it. Needs PyYAML (``trimcp[yaml]``).

        Raises:
            ValueError: ``directory`` is not a folder, skills are served already, or PyYAML
                is missing.
        """
        if self._catalog.skills is not None:
            raise ValueError(
                f"this server already serves the skills in {self._catalog.skills.root}; "
                "put every skill under one folder"
            )
        self._catalog.skills = SkillDirectory(
            directory,
            max_file_size=max_file_size,
            max_skills=max_skills,
            page_size=self._paginator.page_size,
            cursor_codec=self._paginator.codec,
        )
        self._changed("notifications/resources/list_changed")

    def rescan_skills(self) -> None:
        """Read the skills folder again; open sessions get ``resources/list_changed``.

        Raises:
            ValueError: no skills are served, or the folder has gone.
        """
        skills = self._catalog.skills
        if skills is None:
            raise ValueError("this server serves no skills; call add_skills first")
        skills.rescan()
        self._changed("notifications/resources/list_changed")

    # --- prompts and completion -------------------------------------------------------------

    def prompt(self, name: str | None = None, **options: Unpack[PromptOptions]) -> Callable[[F], F]:
        """Register the decorated function as a prompt (see ``add_prompt``)."""

        def register(fn: F) -> F:
            self.add_prompt(fn, name, **options)
            return fn

        return register

    def add_prompt(
        self, fn: Callable[..., object], name: str | None = None, **options: Unpack[PromptOptions]
    ) -> None:
        """Register ``fn`` as a prompt; its parameters are the prompt's arguments.

        Raises:
            ValueError: the name is taken.
        """
        entry = PromptEntry(fn, name, options)
        if entry.name in self._catalog.prompts:
            raise ValueError(f"a prompt named {entry.name!r} is already registered")
        self._catalog.prompts[entry.name] = entry
        self._changed("notifications/prompts/list_changed")

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt and tell open sessions.

        Raises:
            KeyError: no such prompt.
        """
        del self._catalog.prompts[name]
        self._changed("notifications/prompts/list_changed")

    def completion(self) -> Callable[[CompletionHandler], CompletionHandler]:
        """Register the decorated coroutine function as the completion handler.

        It is called as ``handler(ref, argument_name, argument_value, context_arguments)``
        and returns a list of strings or a ``Completion``. Sessions started afterwards
        declare ``completions``.
        """

        def register(fn: CompletionHandler) -> CompletionHandler:
            self._catalog.completion = fn
            self._capabilities = None
            return fn

        return register

    # --- client notifications ---------------------------------------------------------------

    def on_notification(self, method: str) -> Callable[[H], H]:
        """Register the decorated coroutine function for a client notification.

        It is called as ``hook(session, params)`` (a ``SessionHandle`` and the params, ``{}``
        when absent) in its own task; an exception is logged and changes nothing else.
        Several hooks for one method run in registration order. Lifecycle, progress and
        cancellation notifications are the session's own and never reach hooks.
        """

        def register(fn: H) -> H:
            self._notification_hooks.setdefault(method, []).append(fn)
            return fn

        return register

    def on_roots_changed(self) -> Callable[[H], H]:
        """Register a hook for ``notifications/roots/list_changed`` (see ``on_notification``).

        The hook usually fetches the new roots with ``await server.list_roots(session)``.
        """
        return self.on_notification("notifications/roots/list_changed")

    async def list_roots(
        self, session: SessionHandle, *, timeout: float | None = None
    ) -> list[Root]:
        """Ask a session's client for its roots (``roots/list``) outside any request.

        Raises:
            ClientCapabilityMissing: the client did not declare ``roots``.
            RequestTimeout / JsonRpcError: no answer in time, or the client refused.
        """
        require_capability(session.client_capabilities, "roots", "roots/list")
        return read_roots(await session.request("roots/list", timeout=timeout))

    # --- background work --------------------------------------------------------------------

    def add_background(self, child_id: str, start: Callable[..., Awaitable[object]]) -> None:
        """Run ``start`` whenever the server's notifications run (see ``notification_spec``).

        For long-running work of the server's own, such as a watcher that sends
        ``notify_resource_updated``: every runner (``serve_*``, ``open_notifications``, the
        daemon) starts it as the child ``child_id`` after the hub and the ``Fanout``, and
        stops it before them. ``start`` is a supervisor child's start function
        (``trimcp.supervision.ChildSpec``): a coroutine function, which may take
        ``task_status`` to say when it has started. The ``notifications`` supervisor is
        ``rest_for_one``, so a child that crashes is restarted with those added after it,
        and a hub that restarts restarts it too: keep state outside the task. Without a
        runner (a bare ``open_in_memory_client``) it does not run. Takes effect from the
        next start.

        Raises:
            ValueError: the id is taken (by another background child, the task runner, the
                Fanout or the default hub).
        """
        # "notify" is the default hub's id; a hub named otherwise is checked when it starts.
        taken = {"tasks", "fanout", "notify", *(child.id for child in self._background)}
        if child_id in taken:
            raise ValueError(f"a background child {child_id!r} is already there")
        self._background.append(ChildSpec(child_id, start))

    # --- notifications to many sessions ----------------------------------------------------

    async def log(self, level: str, data: JsonValue, logger: str | None = None) -> int:
        """Send ``notifications/message`` to every session, as its ``logging/setLevel`` allows.

        For server-wide messages (a tool's own messages go with ``Context.log``). A session
        that set no level gets everything. Waits only for room in the hub's log topic, never
        for a session; returns how many sessions it was handed to (with a hub, which filters
        by level as it delivers: every session).

        Raises:
            ValueError: ``level`` is not an RFC 5424 level name.
        """
        return await self._sessions.log(level, data, logger)

    @property
    def notification_hub(self) -> NotificationHub | None:
        """The hub the server's notifications go through now, or None (sent directly)."""
        return self._sessions.hub

    def notification_spec(self, hub: NotificationHub | None = None) -> ChildSpec:
        """Return the child spec of the server's notifications: ``hub``, then its ``Fanout``.

        A ``rest_for_one`` supervisor (id ``"notifications"``): the runner of the Tasks
        extension's tasks (id ``"tasks"``, first, so that a hub that restarts takes no task
        with it; ``_tasks_ext_runner.py``), the hub's subtree (``NotificationHub.spec()``),
        then the actor that subscribes this server's sessions to it and attaches it to the
        server while it runs (``_fanout.py``), then the ``add_background`` children. Put it
        before the
        listeners in a ``one_for_one`` tree (module docstring). ``hub`` defaults to a hub in
        a registry of its own, so several servers in one program never share names.
        """
        chosen = hub or NotificationHub(registry=Registry())
        sessions = self._sessions

        def build() -> Fanout:
            return Fanout(sessions, chosen)

        children = [
            self._tasks_ext.spec(),
            chosen.spec(),
            ChildSpec.for_actor("fanout", build),
            *self._background,
        ]
        return supervisor_spec(
            "notifications", children, strategy="rest_for_one", intensity=3, period=10.0
        )

    @asynccontextmanager
    async def open_notifications(
        self, hub: NotificationHub | None = None
    ) -> AsyncIterator[NotificationHub]:
        """Run ``notification_spec(hub)`` for the ``async with`` block; yield the hub.

        Inside it the server's notifications go through the hub (see ``notification_spec``).
        """
        chosen = hub or NotificationHub(registry=Registry())
        async with open_supervisor([self.notification_spec(chosen)]):
            yield chosen

    # --- running ----------------------------------------------------------------------------

    async def serve_stdio(self) -> None:
        """Serve one session over stdin/stdout until stdin ends (``sessions.serve_stdio``).

        Runs inside ``open_notifications`` (module docstring).
        """
        async with self.open_notifications():
            await serve_stdio(self, options=self.session_options)

    async def serve_http(
        self,
        *,
        task_status: trio.TaskStatus[HttpListener] = trio.TASK_STATUS_IGNORED,
        **settings: Unpack[ListenerSettings],
    ) -> None:
        """Serve over Streamable HTTP until cancelled (``trimcp.http.serve_http``).

        Listens on 127.0.0.1 and a free port unless ``host``/``port`` say otherwise; the
        endpoint is ``/mcp``. ``await nursery.start(server.serve_http)`` returns the listener
        (its URLs and session manager). The tree is the module docstring's: the
        notifications, then ``trimcp.http.http_listener_spec``.
        """
        listeners: list[HttpListener] = []
        children = [
            self.notification_spec(),
            http_listener_spec(self, on_started=listeners.append, **settings),
        ]
        async with open_supervisor(children) as supervisor:
            task_status.started(listeners[-1])
            await supervisor.wait_exited()

    async def serve_websocket(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        task_status: trio.TaskStatus[WebSocketServerInfo] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve MCP over WebSocket on its own port (``ws://host:port/mcp/ws``) until cancelled.

        One session per connection, each under its own supervisor, inside
        ``open_notifications``. (The HTTP listener also serves WebSocket at ``/mcp/ws`` on
        its port.)
        """
        options = self.session_options

        async def on_stream(stream: WebSocketStream) -> None:
            await serve_session(self, stream, options=options)

        async with self.open_notifications():
            await transports_serve_websocket(
                on_stream,
                host=host,
                port=port,
                task_status=task_status,
                max_message_size=options.max_message_size,
            )

    def run_http(self, host: str = "127.0.0.1", port: int = 8000, **settings: object) -> None:
        """Run ``serve_http`` in a new trio loop until SIGTERM/SIGINT; log to stderr.

        The first signal drains (as ``trimcp.supervision.run_until_stopped`` does): new
        sessions and requests are refused, those in flight get 30 s to finish; a second stops
        at once (``trimcp.server.run_server``). After SIGTERM this returns. After SIGINT
        (Ctrl-C) it raises ``SystemExit(130)``, so that the program exits as an interrupted
        one should, without a traceback (code after the call does not run; ``finally`` blocks
        do). A port that cannot be bound is logged, naming the address, and raises
        ``SystemExit(1)``.

        Only loopback by default: see the README before binding other addresses.
        """
        _log_to_stderr()
        chosen = typing.cast("ListenerSettings", {**settings, "host": host, "port": port})
        fix = f"choose another port, e.g. server.run_http(port={port + 1})"
        status = run_server(functools.partial(self.serve_http, **chosen), listen_fix=fix)
        if status:
            raise SystemExit(status)

    def run_stdio(self) -> None:
        """Run ``serve_stdio`` in a new trio loop; log to stderr if logging is unconfigured.

        Only protocol messages go to stdout. Returns when the client closes stdin or after
        SIGTERM; raises ``SystemExit(130)`` after SIGINT, as ``run_http`` does.
        """
        _log_to_stderr()
        # No listener to bind: the fix for a taken port is never needed.
        status = run_server(self.serve_stdio, listen_fix="")
        if status:
            raise SystemExit(status)


def _log_to_stderr() -> None:
    # A script that configured no logging still sees where the server listens, and why it
    # stopped; stdout stays free for stdio's protocol messages.
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.INFO)
