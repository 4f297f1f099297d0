"""``ConnectionManager``: the host's upstream servers, each kept connected under supervision.

::

    <name>.host                Supervisor, one_for_one
    ├── <name>                 the manager: the configuration now in force
    └── <name>.connections     Supervisor, one_for_one (children added and removed at runtime)
        └── Connection x K     one per connected server, registered "<name>.conn:<server>"

``ConnectionManager`` is a frozen handle naming that subtree; every part is found through
the ``Registry`` when needed, so a program can run several hosts, and code anywhere reaches
one by its name (``ConnectionManager(name=..., connector=...)`` again, or the value handed
around). ``manager.spec(config)`` is the ``ChildSpec`` to put in an application's tree.

Connections restart themselves after a server failure (``_connection.py``); the supervisor
restarts a ``Connection`` actor only if the actor itself crashes (a bug), within its
intensity. Tools of every connected server are offered as ``mcp__<server>__<tool>``
(``_naming.py``); ``call_tool`` routes such a name back, after the ``PermissionPolicy``
allowed it (a tool the server's entry lists in ``always_allow`` is not asked about).
``reload`` applies a new configuration: servers whose definition changed reconnect, removed
ones disconnect, added ones connect (if enabled and ``auto_connect``), unchanged ones that
had ``failed`` are retried, and the others are not touched.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, final

import trio

from trimcp.actors import Actor, ActorRef, Registry, ReplyTo, Request, current_registry
from trimcp.config.mcp_servers import ClientConfig, diff_configs
from trimcp.errors import (
    ActorGone,
    ChildNotFound,
    ConnectionLost,
    DuplicateChild,
    NotConnected,
    ToolCallDenied,
    UnknownServer,
    UnknownTool,
)
from trimcp.supervision import (
    ChildSpec,
    delete_child,
    start_child,
    supervisor_spec,
    terminate_child,
)

from ._backoff import BackoffPolicy
from ._connection import (
    Connection,
    ConnectionStatus,
    GetLive,
    GetStatus,
    Reconnect,
    WaitConnected,
    WaitDown,
    WaitSettled,
)
from ._naming import qualify, split_qualified
from ._permissions import CallRequest, PermissionPolicy
from ._tool_export import ExportFormat, HostTool, export_tools

if TYPE_CHECKING:
    from trimcp.client.session._core import ProgressCallback
    from trimcp.config.mcp_servers import ServerConfig
    from trimcp.protocol import JsonObject

    from ._connection import Catalog, CatalogKind, Connector, Upstream

__all__ = ["ConnectionManager"]

logger = logging.getLogger(__name__)

#: Seconds a caller that saw ``ConnectionLost`` waits for the connection to notice it too.
_NOTICE_DOWN_TIMEOUT = 5.0

#: Seconds ``connect`` waits for a server's first connection attempt to settle.
CONNECT_TIMEOUT = 60.0


# --- the manager actor: the configuration in force -------------------------------------------


@final
@dataclass(frozen=True, slots=True)
class _GetServers(Request[dict[str, "ServerConfig"]]):
    pass


@final
@dataclass(frozen=True, slots=True)
class _SetServers(Request[None]):
    servers: Mapping[str, ServerConfig]


class _ManagerActor(Actor):
    def __init__(self, servers: Mapping[str, ServerConfig]) -> None:
        super().__init__()
        self._servers = dict(servers)

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        if isinstance(message, _GetServers):
            return dict(self._servers)
        if isinstance(message, _SetServers):
            self._servers = dict(message.servers)
            return None
        raise TypeError(f"ConnectionManager got an unknown call {message!r}")


def _servers_of(config: ClientConfig | Mapping[str, ServerConfig]) -> dict[str, ServerConfig]:
    if isinstance(config, ClientConfig):
        return dict(config.servers)
    return dict(config)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionManager:
    """Names a running host subtree and drives it (see the module docstring).

    Attributes:
        connector: opens a connection to one configured server.
        name: the registry name of the manager; its parts are named after it.
        registry: where the parts are registered (default: the current run's registry).
        backoff: restart delays and intensity of every connection.
        permissions: which tool calls ``call_tool`` lets through.
        on_change: called with a server's name whenever its connection changes state or
            catalog (from the connection's task: must not block); a gateway uses it to
            re-read the catalogs and tell its clients ``list_changed``.
    """

    connector: Connector
    name: str = "mcp-host"
    registry: Registry | None = None
    backoff: BackoffPolicy = field(default_factory=BackoffPolicy)
    permissions: PermissionPolicy = field(default_factory=PermissionPolicy)
    on_change: Callable[[str], None] | None = None

    def spec(self, config: ClientConfig | Mapping[str, ServerConfig]) -> ChildSpec:
        """Return the subtree's child spec, starting with ``config``'s servers configured.

        Nothing connects until ``connect`` / ``connect_all`` (or ``restore_state``).
        """
        servers = _servers_of(config)
        children = [
            ChildSpec.for_actor("manager", lambda: _ManagerActor(servers), name=self.name),
            supervisor_spec(
                "connections", [], name=f"{self.name}.connections", strategy="one_for_one"
            ),
        ]
        return supervisor_spec(
            f"{self.name}.host", children, name=f"{self.name}.host", strategy="one_for_one"
        )

    # --- lookups ----------------------------------------------------------------------------

    def _registry(self) -> Registry:
        return self.registry or current_registry()

    def _connection(self, server: str) -> ActorRef | None:
        return self._registry().whereis(f"{self.name}.conn:{server}")

    async def servers(self) -> dict[str, ServerConfig]:
        """The configured servers, by name."""
        ref = self._registry().lookup(self.name)
        return await ref.call(_GetServers())

    async def _config_of(self, server: str) -> ServerConfig:
        servers = await self.servers()
        config = servers.get(server)
        if config is None:
            known = ", ".join(sorted(servers)) or "none"
            raise UnknownServer(
                f"no MCP server named {server!r} is configured (configured: {known})"
            )
        return config

    # --- connecting -------------------------------------------------------------------------

    async def connect(self, server: str) -> ConnectionStatus:
        """Connect ``server`` (if not already); return its status once the attempt settled.

        A server that fails to connect is retried in the background; its status says so.
        To wait for the outcome of the retries too, follow with ``wait_connected``.

        Raises:
            UnknownServer: ``server`` is not configured.
        """
        ref = await self._ensure_started(server)
        with trio.move_on_after(CONNECT_TIMEOUT):
            try:
                return await ref.call(WaitSettled(), timeout=CONNECT_TIMEOUT)
            except ActorGone:
                pass
        return await self.status_of(server)

    async def start_connecting(self, server: str) -> None:
        """Start connecting ``server`` (if not already) and return without waiting for it.

        ``wait_connected`` then waits for the outcome, with a deadline of the caller's.

        Raises:
            UnknownServer: ``server`` is not configured.
        """
        await self._ensure_started(server)

    async def _ensure_started(self, server: str) -> ActorRef:
        config = await self._config_of(server)
        ref = self._connection(server)
        return ref if ref is not None else await self._start(config)

    async def _start(self, config: ServerConfig) -> ActorRef:
        parent = self._registry().lookup(f"{self.name}.connections")
        spec = ChildSpec.for_actor(
            config.name,
            lambda: Connection(config, self.connector, self.backoff, self.on_change),
            name=f"{self.name}.conn:{config.name}",
            restart="transient",
        )
        try:
            info = await start_child(parent, spec)
        except DuplicateChild:
            ref = self._connection(config.name)
            if ref is None:
                raise
            return ref
        assert isinstance(info.value, ActorRef)
        return info.value

    async def connect_all(self) -> list[ConnectionStatus]:
        """Connect every enabled server with ``auto_connect``, concurrently."""
        servers = await self.servers()
        wanted = [s for s in servers.values() if s.enabled and s.auto_connect]
        results: dict[str, ConnectionStatus] = {}

        async def one(config: ServerConfig) -> None:
            results[config.name] = await self.connect(config.name)

        async with trio.open_nursery() as nursery:
            for config in wanted:
                nursery.start_soon(one, config)
        return [results[config.name] for config in wanted]

    async def disconnect(self, server: str) -> bool:
        """Disconnect ``server``; return False if it was not connected."""
        parent = self._registry().lookup(f"{self.name}.connections")
        ref = self._connection(server)
        if ref is not None:
            # Stopped here, not through the supervisor, so that disconnect_all closes every
            # server at once: the supervisor handles one terminate_child at a time. A
            # connection that stops on request is not restarted (it is transient).
            with contextlib.suppress(ActorGone):
                await ref.stop()
        try:
            await terminate_child(parent, server)
        except ChildNotFound:
            return ref is not None
        with contextlib.suppress(ChildNotFound):
            await delete_child(parent, server)
        return True

    async def disconnect_all(self) -> None:
        """Disconnect every server, concurrently (each process gets its own grace)."""
        async with trio.open_nursery() as nursery:
            for server in await self.servers():
                nursery.start_soon(self.disconnect, server)

    async def reconnect(self, server: str) -> ConnectionStatus:
        """Connect ``server`` afresh now (a failed one too), resetting its backoff."""
        ref = self._connection(server)
        if ref is None:
            return await self.connect(server)
        await ref.call(Reconnect())
        return await ref.call(WaitSettled(), timeout=CONNECT_TIMEOUT)

    async def reload(
        self, config: ClientConfig | Mapping[str, ServerConfig]
    ) -> dict[str, set[str]]:
        """Apply a new configuration; return the names added, removed, changed, unchanged.

        Changed servers that were connected reconnect with their new definition; removed
        ones disconnect; added ones connect if enabled with ``auto_connect``; unchanged ones
        keep their connection untouched, except a ``failed`` one, which is retried (a reload
        is when a fixed cause is expected to show).
        """
        new = _servers_of(config)
        old = await self.servers()
        diff = diff_configs(old, new)
        await self._registry().lookup(self.name).call(_SetServers(new))
        for server in diff.removed:
            await self.disconnect(server)
        async with trio.open_nursery() as nursery:
            for server in diff.changed:
                was_connected = self._connection(server) is not None
                await self.disconnect(server)
                target = new[server]
                if was_connected and target.enabled:
                    nursery.start_soon(self.connect, server)
            for server in diff.added:
                target = new[server]
                if target.enabled and target.auto_connect:
                    nursery.start_soon(self.connect, server)
            for server in diff.unchanged:
                if (await self.status_of(server)).state == "failed":
                    nursery.start_soon(self.reconnect, server)
        return {
            "added": set(diff.added),
            "removed": set(diff.removed),
            "changed": set(diff.changed),
            "unchanged": set(diff.unchanged),
        }

    # --- status -----------------------------------------------------------------------------

    async def status_of(self, server: str) -> ConnectionStatus:
        """One configured server's status (``disconnected`` when no connection runs)."""
        ref = self._connection(server)
        if ref is not None:
            try:
                return await ref.call(GetStatus())
            except ActorGone:
                pass
        return ConnectionStatus(name=server, state="stopped")

    async def status(self) -> list[ConnectionStatus]:
        """Every configured server's status, in name order."""
        return [await self.status_of(server) for server in sorted(await self.servers())]

    async def wait_connected(
        self, server: str, timeout: float = CONNECT_TIMEOUT
    ) -> ConnectionStatus:
        """Wait until ``server`` is connected (or has failed for good); return its status.

        Raises:
            NotConnected: no connection runs for it (it was never connected, or disconnected).
            TimeoutError: ``timeout`` seconds passed first.
        """
        ref = self._connection(server)
        if ref is None:
            raise NotConnected(
                f"MCP server {server!r} is not being connected", server=server, state="stopped"
            )
        with trio.fail_after(timeout):
            return await ref.call(WaitConnected(), timeout=math.inf)

    def is_connected(self, server: str) -> bool:
        """Whether a connection for ``server`` is running (connected or retrying)."""
        return self._connection(server) is not None

    async def list_connections(self) -> list[str]:
        """The servers connected now."""
        return [s.name for s in await self.status() if s.connected]

    async def get_connection(self, server: str) -> Upstream:
        """The live connection to ``server``.

        Raises:
            NotConnected: it is configured but not connected (the message says why).
            UnknownServer: it is not configured.
        """
        upstream, _ = await self._live(server)
        return upstream

    async def _live(self, server: str) -> tuple[Upstream, Catalog]:
        ref = self._connection(server)
        if ref is None:
            await self._config_of(server)
            raise NotConnected(
                f"MCP server {server!r} is not connected; connect it first "
                f"(trimcp shell: /mcp connect {server}).",
                server=server,
                state="stopped",
            )
        try:
            return await ref.call(GetLive())
        except ActorGone:
            raise NotConnected(
                f"MCP server {server!r} was just disconnected.", server=server, state="stopped"
            ) from None

    # --- the catalog across servers ---------------------------------------------------------

    async def _catalogs(self) -> list[tuple[str, Catalog]]:
        found: list[tuple[str, Catalog]] = []
        for server in await self.list_connections():
            try:
                _, catalog = await self._live(server)
            except NotConnected:
                continue
            found.append((server, catalog))
        return found

    async def live_catalogs(self) -> list[tuple[str, dict[CatalogKind, tuple[JsonObject, ...]]]]:
        """``(server, {kind: items})`` for every connected server, items as the server sent them.

        Unlike ``all_tools`` nothing is reshaped: a gateway passes titles, icons and
        annotations through unchanged.
        """
        return [
            (
                server,
                {
                    "tools": catalog.tools,
                    "resources": catalog.resources,
                    "resourceTemplates": catalog.templates,
                    "prompts": catalog.prompts,
                },
            )
            for server, catalog in await self._catalogs()
        ]

    async def all_tools(self) -> list[HostTool]:
        """Every connected server's tools under their qualified names."""
        tools: list[HostTool] = []
        for server, catalog in await self._catalogs():
            tools.extend(_host_tool(server, tool) for tool in catalog.tools)
        return tools

    async def all_resources(self) -> list[tuple[str, JsonObject]]:
        """``(server, resource)`` for every connected server's resources."""
        return [
            (server, item)
            for server, catalog in await self._catalogs()
            for item in catalog.resources
        ]

    async def all_prompts(self) -> list[tuple[str, JsonObject]]:
        """``(server, prompt)`` for every connected server's prompts."""
        return [
            (server, item) for server, catalog in await self._catalogs() for item in catalog.prompts
        ]

    async def export_tools(self, shape: ExportFormat) -> list[dict[str, object]]:
        """Every connected tool as function definitions for an LLM API (``_tool_export.py``)."""
        return export_tools(await self.all_tools(), shape)

    async def call_tool(
        self,
        qualified_name: str,
        arguments: JsonObject | None = None,
        *,
        on_progress: ProgressCallback | None = None,
    ) -> JsonObject:
        """Call a tool by its qualified name, if the permission rules allow it.

        Raises:
            UnknownTool: no connected server offers it.
            ToolCallDenied: the rules refused it.
            NotConnected: its server is not connected.
        """
        parts = split_qualified(qualified_name)
        if parts is None:
            raise UnknownTool(
                f"{qualified_name!r} is not a host tool name; they look like "
                "mcp__<server>__<tool> (see the tools list)"
            )
        server = parts[0]
        upstream, catalog = await self._live(server)
        tool = next(
            (t for t in catalog.tools if qualify(server, str(t.get("name"))) == qualified_name),
            None,
        )
        if tool is None:
            offered = ", ".join(str(t.get("name")) for t in catalog.tools) or "none"
            raise UnknownTool(
                f"MCP server {server!r} offers no tool named like {qualified_name!r} "
                f"(it offers: {offered})"
            )
        name = str(tool["name"])
        annotations = tool.get("annotations")
        config = (await self.servers()).get(server)
        request = CallRequest(
            qualified_name=qualified_name,
            server=server,
            tool=name,
            arguments=arguments or {},
            annotations=annotations if isinstance(annotations, Mapping) else None,
            always_allowed=config is not None and name in config.always_allow,
        )
        decision = await self.permissions.check(request)
        if decision.action != "allow":
            raise ToolCallDenied(f"calling {qualified_name!r} was refused: {decision.reason}")
        try:
            return await upstream.call_tool(name, arguments or {}, on_progress=on_progress)
        except ConnectionLost:
            await self._noticed_down(server, upstream)
            raise

    async def _noticed_down(self, server: str, upstream: Upstream) -> None:
        """Return once ``server``'s connection knows ``upstream`` is gone (bounded).

        The caller saw the loss first; after this, ``status()`` and ``wait_connected`` tell
        the truth about it instead of the connection that just died.
        """
        ref = self._connection(server)
        if ref is None:
            return
        with trio.move_on_after(_NOTICE_DOWN_TIMEOUT), contextlib.suppress(ActorGone):
            await ref.call(WaitDown(upstream), timeout=math.inf)

    # --- state across restarts of the host --------------------------------------------------

    async def save_state(self, path: str | Path) -> None:
        """Write which servers are connected to ``path`` (JSON), for ``restore_state``."""
        data = {"connected": sorted(s.name for s in await self.status() if s.state != "stopped")}
        target = Path(path)
        temporary = target.with_suffix(target.suffix + ".tmp")
        await trio.Path(temporary).write_text(json.dumps(data, indent=2) + "\n")
        await trio.Path(temporary).replace(target)

    async def restore_state(self, path: str | Path) -> list[ConnectionStatus]:
        """Connect the servers ``save_state`` recorded that are still configured and enabled."""
        source = trio.Path(path)
        if not await source.exists():
            return []
        try:
            data = json.loads(await source.read_text())
            names = [str(n) for n in data.get("connected", [])]
        except (ValueError, AttributeError, TypeError) as exc:
            logger.warning("ignoring the host state file %s: %s", path, exc)
            return []
        servers = await self.servers()
        wanted = [n for n in names if n in servers and servers[n].enabled]
        return [await self.connect(name) for name in wanted]


def _host_tool(server: str, tool: JsonObject) -> HostTool:
    name = str(tool.get("name", ""))
    schema = tool.get("inputSchema")
    output = tool.get("outputSchema")
    annotations = tool.get("annotations")
    title = tool.get("title")
    description = tool.get("description")
    return HostTool(
        qualified_name=qualify(server, name),
        server=server,
        name=name,
        title=title if isinstance(title, str) else None,
        description=description if isinstance(description, str) else "",
        input_schema=schema if isinstance(schema, Mapping) else {"type": "object"},
        output_schema=output if isinstance(output, Mapping) else None,
        annotations=annotations if isinstance(annotations, Mapping) else None,
    )
