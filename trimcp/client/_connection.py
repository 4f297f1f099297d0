"""``Connection``: one configured upstream server, kept connected by an actor.

The actor's helper task connects (``connector(config)``: a client session over stdio, HTTP
or WebSocket, as ``Upstream``), reads the server's catalog (tools, resources, prompts), and
then waits for the connection to end. When it ends on its own — the server crashed or went
away — the catalog is dropped (its tools disappear from the host), the failure is kept in
plain words, and after a backoff delay (``_backoff.py``: exponential, with jitter) it
connects again, until the restart intensity is spent; then the connection is ``failed`` and
waits for ``reconnect``. A failure that no retry can cure (``permanent``: the command does not
exist or may not be run, a ``${VAR}`` is not set) makes it ``failed`` at once, with its
reason, instead of repeating the same failure through every backoff delay. Calls in flight
when a server dies fail with the session's typed
error (``ServerExited``, ``TransportBroken``, ...); they are not retried, since a tool call
is not known to be safe to repeat.

States: ``connecting`` -> ``connected`` -> (``reconnecting`` -> ``connecting`` ...) or
``failed``; ``stopped`` once the actor ends (``disconnect``).

The actor only runs the lifecycle. Tool calls do not queue in its mailbox: the manager asks
it for the live ``Upstream`` (one call) and calls the server from the caller's own task, so
calls to one server run concurrently.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, final

import trio

from trimcp.actors import DEFER, Actor, ReplyTo, Request
from trimcp.errors import (
    CommandNotExecutable,
    CommandNotFound,
    ConfigError,
    JsonRpcError,
    NotConnected,
)

from ._backoff import Backoff, BackoffPolicy

if TYPE_CHECKING:
    from trimcp.client.session._core import ProgressCallback
    from trimcp.config.mcp_servers import ServerConfig
    from trimcp.protocol import JsonObject

__all__ = [
    "CatalogKind",
    "Connection",
    "ConnectionState",
    "ConnectionStatus",
    "Connector",
    "Upstream",
]

logger = logging.getLogger(__name__)

ConnectionState = Literal["connecting", "connected", "reconnecting", "failed", "stopped"]
CatalogKind = Literal["tools", "resources", "resourceTemplates", "prompts"]


class Upstream(Protocol):
    """A connected server, as the host uses it (``_upstream.py`` adapts a ``ClientSession``)."""

    async def list_all(self, kind: CatalogKind) -> list[JsonObject]:
        """Every item of ``kind`` (all pages), as the server sent them; ``[]`` if not offered."""
        ...

    async def call_tool(
        self,
        name: str,
        arguments: JsonObject,
        *,
        on_progress: ProgressCallback | None = None,
    ) -> JsonObject:
        """Call a tool; return its ``CallToolResult`` as sent."""
        ...

    async def wait_closed(self) -> BaseException | None:
        """Return when the connection has ended, with why (``None``: closed by us)."""
        ...


#: Opens a connection to a configured server; ``on_list_changed(kind)`` is called when the
#: server says a catalog changed.
Connector = Callable[
    ["ServerConfig", Callable[[CatalogKind], None]], AbstractAsyncContextManager[Upstream]
]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionStatus:
    """One server's connection, for ``status()`` and the CLI's table.

    Attributes:
        name: the configured server name.
        state: see the module docstring.
        restarts: reconnects after a failure since the last manual connect.
        tools: tools offered now (0 while not connected).
        resources: resources offered now.
        prompts: prompts offered now.
        last_error: why the last connection failed or ended, in plain words.
        connected_for: seconds since it connected, or ``None``.
    """

    name: str
    state: ConnectionState
    restarts: int = 0
    tools: int = 0
    resources: int = 0
    prompts: int = 0
    last_error: str | None = None
    connected_for: float | None = None

    @property
    def connected(self) -> bool:
        return self.state == "connected"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Catalog:
    """What a connected server offers, as it sent it."""

    tools: tuple[JsonObject, ...] = ()
    resources: tuple[JsonObject, ...] = ()
    templates: tuple[JsonObject, ...] = ()
    prompts: tuple[JsonObject, ...] = ()


# --- messages -------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True)
class GetStatus(Request[ConnectionStatus]):
    pass


@final
@dataclass(frozen=True, slots=True)
class GetLive(Request[tuple[Upstream, Catalog]]):
    """The live upstream and its catalog; fails with ``NotConnected``."""


@final
@dataclass(frozen=True, slots=True)
class WaitSettled(Request[ConnectionStatus]):
    """Answered once the current attempt has connected or failed."""


@final
@dataclass(frozen=True, slots=True)
class WaitConnected(Request[ConnectionStatus]):
    """Answered once the connection is up, or has failed for good."""


@final
@dataclass(frozen=True, slots=True)
class Reconnect(Request[None]):
    pass


@final
@dataclass(frozen=True, slots=True, eq=False)
class WaitDown(Request[ConnectionStatus]):
    """Answered once ``upstream`` is no longer this connection's live one.

    A caller whose request failed with ``ConnectionLost`` learns of the loss in its own task,
    possibly before this actor does: waiting for this first means that whatever it asks next
    (``status``, ``wait_connected``) already knows the server went down.
    """

    upstream: Upstream


@final
@dataclass(frozen=True, slots=True)
class _Refresh:
    kind: CatalogKind


@final
@dataclass(slots=True)
class _Attempt:
    """One connection attempt's facts, replaced on every attempt."""

    settled: list[ReplyTo] = field(default_factory=list)
    done: bool = False


def describe(error: BaseException) -> str:
    """The plain-words line(s) of a connection failure (the error's own message first).

    Exception groups from the connector's nurseries are unwrapped to the errors inside.
    """
    if isinstance(error, BaseExceptionGroup):
        return "\n".join(describe(inner) for inner in error.exceptions)
    text = str(error).strip()
    if not text:
        text = type(error).__name__
    return text


#: Failures that come back the same on every attempt until someone changes something: a
#: program that is not installed or not executable, a ``${VAR}`` that is not set (trimcp's
#: environment does not change while it runs). Everything else (a crash, a refused or dropped
#: connection, a slow handshake, an HTTP error) may pass, and is retried.
_PERMANENT: tuple[type[Exception], ...] = (CommandNotFound, CommandNotExecutable, ConfigError)


def permanent(error: BaseException) -> bool:
    """Whether retrying cannot cure ``error`` (``_PERMANENT``), looking inside groups.

    In a group, one such error is enough: the others are what it brought down with it.
    """
    if isinstance(error, BaseExceptionGroup):
        return any(permanent(inner) for inner in error.exceptions)
    return isinstance(error, _PERMANENT)


class Connection(Actor):
    """Keeps one configured server connected (see the module docstring)."""

    def __init__(
        self,
        config: ServerConfig,
        connector: Connector,
        policy: BackoffPolicy | None = None,
        on_change: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__()
        self._config = config
        self._connector = connector
        self._backoff = Backoff(policy or BackoffPolicy())
        self._on_change = on_change
        self._state: ConnectionState = "connecting"
        self._restarts = 0
        self._last_error: str | None = None
        self._upstream: Upstream | None = None
        self._catalog = Catalog()
        self._since: float | None = None
        self._attempt = _Attempt()
        self._until_up: list[ReplyTo] = []
        self._until_down: list[ReplyTo] = []
        self._loop_scope: trio.CancelScope | None = None

    @property
    def server(self) -> str:
        return self._config.name

    async def init(self) -> None:
        self.start_soon(self._run)

    # --- the lifecycle loop -------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            with trio.CancelScope() as scope:
                self._loop_scope = scope
                error = await self._connect_once()
                self._went_down(error)
                # No backoff is used up by a failure no retry can cure: it is final now.
                delay = None if permanent(error) else self._backoff.next_delay(trio.current_time())
                if delay is None:
                    self._set_state("failed")
                    logger.error(
                        "MCP server %r failed (%d attempts in a row); giving up until "
                        "reconnected: %s",
                        self.server,
                        self._restarts + 1,
                        self._last_error,
                    )
                else:
                    self._set_state("reconnecting")
                    self._restarts += 1
                    logger.warning(
                        "MCP server %r connection ended (%s); reconnecting in %.1f s",
                        self.server,
                        (self._last_error or "").splitlines()[0] if self._last_error else "",
                        delay,
                    )
                self._settle()
                if delay is None:
                    await trio.sleep_forever()
                await trio.sleep(delay)
            # Waited out the delay, or cancelled by ``reconnect``: a new attempt.
            self._since = None
            self._catalog = Catalog()
            # Callers still waiting for the interrupted attempt wait for this one.
            waiting = [] if self._attempt.done else self._attempt.settled
            self._attempt = _Attempt(settled=waiting)

    async def _connect_once(self) -> BaseException:
        self._set_state("connecting")
        try:
            async with self._connector(self._config, self._list_changed) as upstream:
                self._catalog = await _read_catalog(upstream)
                self._upstream = upstream
                self._since = trio.current_time()
                self._set_state("connected")
                self._settle()
                reason = await upstream.wait_closed()
                return reason or ConnectionError(f"the connection to {self.server!r} closed")
        except Exception as exc:  # noqa: BLE001  (every failure is a reason to reconnect)
            return exc
        finally:
            self._upstream = None

    def _went_down(self, error: BaseException) -> None:
        now = trio.current_time()
        if self._since is not None:
            self._backoff.stayed_up(self._since, now)
        self._since = None
        self._catalog = Catalog()
        self._last_error = describe(error)

    def _set_state(self, state: ConnectionState) -> None:
        self._state = state
        if state in ("connected", "failed") and self._until_up:
            waiting, self._until_up = self._until_up, []
            status = self._status()
            for reply in waiting:
                reply.reply(status)
        if state != "connected" and self._until_down:
            waiting, self._until_down = self._until_down, []
            status = self._status()
            for reply in waiting:
                reply.reply(status)
        if self._on_change is not None:
            self._on_change(self.server)

    def _settle(self) -> None:
        attempt = self._attempt
        attempt.done = True
        waiting, attempt.settled = attempt.settled, []
        status = self._status()
        for reply in waiting:
            reply.reply(status)

    def _list_changed(self, kind: CatalogKind) -> None:
        if not self.stopping:
            self.ref.send_info(_Refresh(kind))

    # --- messages -------------------------------------------------------------------------

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        if isinstance(message, GetStatus):
            return self._status()
        if isinstance(message, GetLive):
            upstream = self._upstream
            if upstream is None or self._state != "connected":
                # The caller's error, not this actor's: answered, not raised here.
                reply_to.fail(self._not_connected())
                return DEFER
            return upstream, self._catalog
        if isinstance(message, WaitSettled | WaitConnected | WaitDown):
            return self._wait(message, reply_to)
        if isinstance(message, Reconnect):
            self._backoff.reset()
            self._restarts = 0
            if self._loop_scope is not None:
                self._loop_scope.cancel()
            return None
        raise TypeError(f"Connection got an unknown call {message!r}")

    def _wait(self, message: WaitSettled | WaitConnected | WaitDown, reply_to: ReplyTo) -> object:
        if isinstance(message, WaitDown):
            if self._upstream is not message.upstream or self._state != "connected":
                return self._status()
            self._until_down.append(reply_to)
            return DEFER
        if isinstance(message, WaitSettled):
            if self._attempt.done:
                return self._status()
            self._attempt.settled.append(reply_to)
            return DEFER
        if self._state in ("connected", "failed"):
            return self._status()
        self._until_up.append(reply_to)
        return DEFER

    async def handle_info(self, message: object) -> None:
        if isinstance(message, _Refresh) and self._upstream is not None:
            upstream = self._upstream
            try:
                items = tuple(await upstream.list_all(message.kind))
            except Exception as exc:  # noqa: BLE001  (a failed refresh keeps the old list)
                logger.warning(
                    "MCP server %r: refreshing %s failed: %s", self.server, message.kind, exc
                )
                return
            self._catalog = _replace(self._catalog, message.kind, items)
            if self._on_change is not None:
                self._on_change(self.server)

    def _status(self) -> ConnectionStatus:
        catalog = self._catalog
        since = self._since
        return ConnectionStatus(
            name=self.server,
            state=self._state,
            restarts=self._restarts,
            tools=len(catalog.tools),
            resources=len(catalog.resources),
            prompts=len(catalog.prompts),
            last_error=self._last_error,
            connected_for=None if since is None else trio.current_time() - since,
        )

    def _not_connected(self) -> NotConnected:
        state = self._state
        lines = [f"MCP server {self.server!r} is not connected (it is {state})."]
        if self._last_error:
            lines.append("The last attempt failed:")
            lines.extend(f"  {line}" for line in self._last_error.splitlines())
        if state == "failed":
            lines.append(
                f"Fix the cause, then reconnect it (trimcp shell: /mcp connect {self.server})."
            )
        elif state in ("connecting", "reconnecting"):
            lines.append("It is being connected; try again in a moment.")
        return NotConnected("\n".join(lines), server=self.server, state=state)

    async def terminate(self, reason: object) -> None:
        self._state = "stopped"
        if self._on_change is not None:
            self._on_change(self.server)


def _replace(catalog: Catalog, kind: CatalogKind, items: tuple[JsonObject, ...]) -> Catalog:
    if kind == "tools":
        return Catalog(
            tools=items,
            resources=catalog.resources,
            templates=catalog.templates,
            prompts=catalog.prompts,
        )
    if kind == "resources":
        return Catalog(
            tools=catalog.tools,
            resources=items,
            templates=catalog.templates,
            prompts=catalog.prompts,
        )
    if kind == "resourceTemplates":
        return Catalog(
            tools=catalog.tools,
            resources=catalog.resources,
            templates=items,
            prompts=catalog.prompts,
        )
    return Catalog(
        tools=catalog.tools, resources=catalog.resources, templates=catalog.templates, prompts=items
    )


async def _read_catalog(upstream: Upstream) -> Catalog:
    kinds: Sequence[CatalogKind] = ("tools", "resources", "resourceTemplates", "prompts")
    found: dict[str, tuple[JsonObject, ...]] = {}
    for kind in kinds:
        try:
            found[kind] = tuple(await upstream.list_all(kind))
        except JsonRpcError as exc:
            # The server refused the listing (a bug of its own, or a method it lacks): it
            # offers nothing of that kind, and its other features still work.
            logger.warning("listing %s failed: %s", kind, exc)
            found[kind] = ()
    return Catalog(
        tools=found["tools"],
        resources=found["resources"],
        templates=found["resourceTemplates"],
        prompts=found["prompts"],
    )
