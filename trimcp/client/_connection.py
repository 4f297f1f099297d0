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
``failed``; ``stopped`` once the actor ends (``disconnect``). The status tells the truth about
each (``_status.py``): when a ``reconnecting`` connection tries next and which attempt that
is; why a ``failed`` one gave up, with its last error and, for a process, its exit code and
stderr tail. ``failed`` is not forever: ``Reconnect`` (the manager's ``reconnect``, and its
``reload``) starts afresh with the backoff reset.

Nothing here logs a server's configuration: the log lines name the server and quote its
errors, whose texts never hold ``env`` or ``headers`` values (the launch errors show the
command line with secret-looking arguments hidden, and no environment).

The actor only runs the lifecycle. Tool calls do not queue in its mailbox: the manager asks
it for the live ``Upstream`` (one call) and calls the server from the caller's own task, so
calls to one server run concurrently.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

import trio

from trimcp.actors import DEFER, Actor, ReplyTo, Request
from trimcp.errors import NotConnected

from ._backoff import Backoff, BackoffPolicy
from ._catalog import Catalog, CatalogKind, Upstream, read_catalog, replace_items
from ._status import (
    ConnectionState,
    ConnectionStatus,
    ExitFacts,
    describe,
    exit_facts,
    permanent,
    wall_clock,
)
from .process import ProcessWatch, watch_processes

if TYPE_CHECKING:
    from trimcp.config.mcp_servers import ServerConfig

__all__ = [
    "Catalog",
    "CatalogKind",
    "Connection",
    "ConnectionState",
    "ConnectionStatus",
    "Connector",
    "Upstream",
    "describe",
    "permanent",
]

logger = logging.getLogger(__name__)

#: Opens a connection to a configured server; ``on_list_changed(kind)`` is called when the
#: server says a catalog changed.
Connector = Callable[
    ["ServerConfig", Callable[[CatalogKind], None]], AbstractAsyncContextManager[Upstream]
]


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
        # Attempts since the last manual connect (the one under way included).
        self._attempts = 0
        # When the next attempt starts (trio's clock), while ``reconnecting``.
        self._next_attempt: float | None = None
        # Why it gave up, while ``failed``; and the exit behind the last error, if any.
        self._failure: str | None = None
        self._exit = ExitFacts()
        # Which server process the connection runs now (stdio servers only).
        self._process = ProcessWatch()

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
                delay = self._after_failure(error)
                if delay is None:
                    await trio.sleep_forever()
                await trio.sleep(delay)
            # Waited out the delay, or cancelled by ``reconnect``: a new attempt.
            self._since = None
            self._next_attempt = None
            self._failure = None
            self._catalog = Catalog()
            # Callers still waiting for the interrupted attempt wait for this one.
            waiting = [] if self._attempt.done else self._attempt.settled
            self._attempt = _Attempt(settled=waiting)

    def _after_failure(self, error: BaseException) -> float | None:
        """Decide between a retry after a delay and giving up; report it; return the delay."""
        now = trio.current_time()
        # No backoff is used up by a failure no retry can cure: it is final now.
        cured_by_retry = not permanent(error)
        delay = self._backoff.next_delay(now) if cured_by_retry else None
        last = (self._last_error or "").splitlines()
        if delay is None:
            self._failure = self._give_up_reason(cured_by_retry=cured_by_retry)
            self._set_state("failed")
            logger.error(
                "MCP server %r failed: %s; last error: %s%s. It is retried on reconnect or reload.",
                self.server,
                self._failure,
                last[0] if last else "(none)",
                _exit_suffix(self._exit),
            )
        else:
            self._next_attempt = now + delay
            self._restarts += 1
            self._set_state("reconnecting")
            logger.warning(
                "MCP server %r connection ended (%s%s); attempt %d in %.1f s (at %s)",
                self.server,
                last[0] if last else "",
                _exit_suffix(self._exit),
                self._attempts + 1,
                delay,
                wall_clock(delay),
            )
        self._settle()
        return delay

    def _give_up_reason(self, *, cured_by_retry: bool) -> str:
        if not cured_by_retry:
            return "not retried: the same error comes back until its cause is fixed"
        policy = self._backoff.policy
        restarts = "restart" if policy.intensity == 1 else "restarts"
        return (
            f"restart intensity exceeded ({policy.intensity} {restarts} within "
            f"{policy.period:g} s; {self._attempts} attempts in a row)"
        )

    async def _connect_once(self) -> BaseException:
        self._attempts += 1
        self._set_state("connecting")
        try:
            with watch_processes(self._process):
                return await self._serve_once()
        except Exception as exc:  # noqa: BLE001  (every failure is a reason to reconnect)
            return exc
        finally:
            self._upstream = None
            self._process.clear()

    async def _serve_once(self) -> BaseException:
        """Connect, read the catalog, wait for the end; return why it ended."""
        async with self._connector(self._config, self._list_changed) as upstream:
            self._catalog = await read_catalog(upstream)
            self._upstream = upstream
            self._since = trio.current_time()
            self._set_state("connected")
            # The log's last word on a server that was down must be that it is up again.
            logger.info(
                "MCP server %r connected (attempt %d): %d tools, %d resources, %d prompts",
                self.server,
                self._attempts,
                len(self._catalog.tools),
                len(self._catalog.resources),
                len(self._catalog.prompts),
            )
            self._settle()
            reason = await upstream.wait_closed()
            return reason or ConnectionError(f"the connection to {self.server!r} closed")

    def _went_down(self, error: BaseException) -> None:
        now = trio.current_time()
        if self._since is not None:
            self._backoff.stayed_up(self._since, now)
        self._since = None
        self._catalog = Catalog()
        self._last_error = describe(error)
        self._exit = exit_facts(error)

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
            self._attempts = 0
            if self._loop_scope is not None:
                self._loop_scope.cancel()
                # A WaitSettled after this waits for the new attempt, not the one cancelled
                # (whose status, pid included, would otherwise be answered at once).
                if self._attempt.done:
                    self._attempt = _Attempt()
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
            self._catalog = replace_items(self._catalog, message.kind, items)
            if self._on_change is not None:
                self._on_change(self.server)

    def _status(self) -> ConnectionStatus:
        catalog = self._catalog
        since = self._since
        now = trio.current_time()
        deadline = self._next_attempt if self._state == "reconnecting" else None
        next_in = None if deadline is None else max(0.0, deadline - now)
        # The next attempt while one is awaited; else the one under way or made last.
        attempt = self._attempts if deadline is None else self._attempts + 1
        exited = self._exit if self._state in ("reconnecting", "failed") else ExitFacts()
        return ConnectionStatus(
            name=self.server,
            state=self._state,
            pid=self._process.pid,
            restarts=self._restarts,
            tools=len(catalog.tools),
            resources=len(catalog.resources),
            prompts=len(catalog.prompts),
            last_error=self._last_error,
            connected_for=None if since is None else now - since,
            attempt=attempt,
            next_attempt_in=next_in,
            next_attempt_at=None if next_in is None else wall_clock(next_in),
            failure=self._failure if self._state == "failed" else None,
            exit_code=exited.code,
            exit_signal=exited.signal,
            stderr_tail=exited.stderr_tail,
        )

    def _not_connected(self) -> NotConnected:
        state = self._state
        lines = [f"MCP server {self.server!r} is not connected (it is {state})."]
        if self._last_error:
            lines.append("The last attempt failed:")
            lines.extend(f"  {line}" for line in self._last_error.splitlines())
        if state == "failed":
            lines.append(f"It gave up: {self._failure}.")
            lines.append(
                f"Fix the cause, then reconnect it (trimcp shell: /mcp connect {self.server}) "
                "or reload the configuration."
            )
        elif state == "reconnecting" and self._next_attempt is not None:
            left = max(0.0, self._next_attempt - trio.current_time())
            lines.append(
                f"It is retried in {left:.1f} s (attempt {self._attempts + 1}); try again then."
            )
        elif state in ("connecting", "reconnecting"):
            lines.append("It is being connected; try again in a moment.")
        return NotConnected("\n".join(lines), server=self.server, state=state)

    async def terminate(self, reason: object) -> None:
        self._state = "stopped"
        if self._on_change is not None:
            self._on_change(self.server)


def _exit_suffix(facts: ExitFacts) -> str:
    """``; exit code 3, stderr: ...`` for a log line, or nothing when no process exited."""
    words = facts.words()
    return f"; {words}" if words else ""
