"""What the admin app looks at: handles on the live parts, handed over by the daemon.

The admin app reads everything at request time from the objects that run (the figures are
never copies kept up to date on the side, which is how status pages come to lie). The
daemon builds these handles when it builds its children and gives them to the admin app:

* ``ListenerWatch``: one per listener: its name, transport and configured address; once it
  has started, the address it actually bound, its ``SessionManager`` and its event store;
  ``bound`` is False again as soon as it stops;
* ``ReloadLog``: what the daemon's last reload did to the upstreams (or why it could not);
* ``AdminTargets``: the lot, with the gateway (its upstreams) and the daemon's
  ``restart_needed`` rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.config import SysConfig
    from trimcp.gateway import Gateway, ReloadReport
    from trimcp.http import HttpListener
    from trimcp.server import TaskCounts
    from trimcp.sessions import SessionManager
    from trimcp.transports import EventStore

__all__ = ["AdminTargets", "ListenerWatch", "ReloadLog"]


@final
@dataclass(slots=True, eq=False)
class ListenerWatch:
    """One listener as the admin app sees it (module docstring).

    Attributes:
        name: ``http``, ``websocket`` or ``stdio``.
        transport: the same, as ``/status`` shows it.
        address: the configured address, replaced by the bound one once it is bound.
        bound: True while it serves.
        manager: its session manager, once started (stdio has none).
        store: its SSE event store (HTTP with resumable streams only).
        store_limit: the store's byte bound (``[http] max_event_store_bytes``).
        http: the HTTP listener itself, once started.
    """

    name: str
    transport: str
    address: str
    bound: bool = False
    manager: SessionManager | None = None
    store: EventStore | None = None
    store_limit: int | None = None
    http: HttpListener | None = None

    def http_started(self, listener: HttpListener) -> None:
        """``http_listener_spec``'s ``on_started``: remember the listener's live parts."""
        self.address = listener.url
        self.manager = listener.manager
        self.store = listener.store
        self.http = listener

    @property
    def serving(self) -> bool:
        """Whether it serves now (an HTTP listener says so itself)."""
        if self.http is not None:
            return self.http.bound
        return self.bound

    def started(self, address: str, manager: SessionManager | None = None) -> None:
        """A listener other than HTTP has bound ``address``."""
        self.address = address
        self.manager = manager
        self.bound = True

    def stopped(self) -> None:
        """It stopped serving."""
        self.bound = False


@final
@dataclass(slots=True, eq=False)
class ReloadLog:
    """What the daemon's reloads did to the upstreams, the last one's outcome kept.

    Attributes:
        count: reloads so far.
        report: the gateway's report of the last one (None: nothing to reload, or it failed).
        error: why the last one could not reload the upstreams (an unreadable
            ``mcpServers`` file), or None.
    """

    count: int = 0
    report: ReloadReport | None = None
    error: str | None = None

    def record(self, report: ReloadReport | None, error: str | None = None) -> None:
        """Keep one reload's outcome."""
        self.count += 1
        self.report = report
        self.error = error


@final
@dataclass(slots=True, eq=False)
class AdminTargets:
    """Everything the admin app looks at (module docstring).

    Attributes:
        listeners: the enabled listeners, in start order.
        gateway: the gateway and its upstreams; None when a ``[server] object`` is served
            as it is.
        reloads: the daemon's reload outcomes.
        restart_needed: the tables whose changes wait for a restart (started, new config).
        version: trimcp's version, for ``/status`` and ``trimcp_build_info``.
        tasks: how many tasks the served server holds now (``MCPServer.task_counts`` or
            ``Gateway.task_counts``); None when it keeps none (another ``RequestHandler``).
    """

    listeners: list[ListenerWatch] = field(default_factory=list)
    gateway: Gateway | None = None
    reloads: ReloadLog = field(default_factory=ReloadLog)
    restart_needed: Callable[[SysConfig, SysConfig], list[str]] | None = None
    version: str = "0"
    tasks: Callable[[], TaskCounts] | None = None
