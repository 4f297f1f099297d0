"""Hot reload: a running gateway takes a new set of upstreams and new ``[gateway]`` settings.

What ``trimcp serve`` does on SIGHUP (``trimcp.cli`` -> ``trimcp.daemon``) once it has
re-read ``sys_config.toml``'s ``[upstreams]`` and the user's and project's ``mcpServers``
files. The diffing and the restarts are ``ConnectionManager.reload``'s (``trimcp.client``):

* an **added** upstream starts (if ``enabled`` with ``auto_connect``);
* a **removed** one stops: its connection actor goes, and its process group with it;
* a **changed** one (any field of its definition but where it was read from) restarts with
  the new definition;
* an **unchanged** one keeps its process and its session, untouched; one that had
  ``failed`` (restart intensity exceeded) is retried, since a reload is when its fixed
  cause is expected to show.

Local backends (the built-in tools, the ``[server] object``) are not reloaded: their
definition is the code that runs, and they keep their place before the upstreams. An
upstream named like one of them is left out, as at start.

Downstream sessions stay open. The gateway's view is rebuilt with the new settings (naming,
prefixes, allow/deny) and the connected backends, and every session whose offer changed
gets ``notifications/tools/list_changed`` (and the prompts/resources ones): MCP 2025-11-25,
Server Features > Tools > List Changed Notification,
https://modelcontextprotocol.io/specification/2025-11-25/server/tools#list-changed-notification.
Subscriptions to resources of a removed backend are forgotten.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, final

from trimcp.client import ClientConfig

if TYPE_CHECKING:
    from collections.abc import Mapping

    import trio

    from trimcp.client import ConnectionManager, ServerConfig
    from trimcp.config import GatewaySettings
    from trimcp.sessions import RequestHandler, SessionHandle

__all__ = ["ReloadReport", "Reloadable", "merged_servers", "reload_gateway"]

logger = logging.getLogger(__name__)


class Reloadable(Protocol):
    """The parts of a ``Gateway`` a reload changes (a protocol: ``_gateway.py`` imports this)."""

    manager: ConnectionManager
    _servers: dict[str, ServerConfig]
    _local: dict[str, RequestHandler]
    _settings: GatewaySettings
    _clashes_logged: set[tuple[str, str]]
    _subscriptions: dict[tuple[str, str], set[SessionHandle]]
    _dirty: trio.Event

    async def _rebuild(self) -> None: ...


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReloadReport:
    """What a reload did, backend names in configuration order.

    Attributes:
        added: upstreams that were started.
        removed: upstreams that were stopped.
        restarted: upstreams whose definition changed, restarted with the new one.
        unchanged: backends left running as they were (local ones included).
        retried: those of ``unchanged`` that had failed and are connected afresh.
        left_out: upstreams not run because a local backend has their name.
        settings_changed: the ``[gateway]`` settings differ from the ones in force before.
    """

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    restarted: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    retried: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    settings_changed: bool = False

    @property
    def changed(self) -> bool:
        """Whether anything at all was started, stopped, restarted, retried or renamed."""
        return bool(
            self.added or self.removed or self.restarted or self.retried or self.settings_changed
        )

    def describe(self) -> str:
        """One line for the log, e.g. ``added b; removed a; restarted c; unchanged skills``."""
        parts = [
            f"{label} {', '.join(names)}"
            for label, names in (
                ("added", self.added),
                ("removed", self.removed),
                ("restarted", self.restarted),
                ("unchanged", self.unchanged),
                ("retried (had failed)", self.retried),
                ("left out (a built-in backend has the name)", self.left_out),
            )
            if names
        ]
        if self.settings_changed:
            parts.append("[gateway] naming/allow/deny applied")
        return "; ".join(parts) or "no backends"


def merged_servers(
    local: Mapping[str, ServerConfig], upstreams: ClientConfig | Mapping[str, ServerConfig]
) -> tuple[dict[str, ServerConfig], tuple[str, ...]]:
    """Local backends first, then the upstreams not named like one; and those left out."""
    servers = upstreams.servers if isinstance(upstreams, ClientConfig) else upstreams
    ordered = dict(local)
    left_out = tuple(name for name in servers if name in ordered)
    ordered.update((name, config) for name, config in servers.items() if name not in local)
    return ordered, left_out


async def reload_gateway(
    gateway: Reloadable,
    upstreams: ClientConfig | Mapping[str, ServerConfig],
    settings: GatewaySettings,
) -> ReloadReport:
    """Apply ``upstreams`` and ``settings`` to the running ``gateway`` (module docstring).

    Returns once every started or restarted backend's first connection attempt has settled
    (``ConnectionManager.reload``) and the view is rebuilt, so a list right after it sees
    the new offer.
    """
    local = {name: config for name, config in gateway._servers.items() if name in gateway._local}
    new, left_out = merged_servers(local, upstreams)
    for name in left_out:
        logger.warning("upstream %r is left out: a built-in backend has that name", name)
    old = gateway._servers
    failed_before = {
        name
        for name in old
        if name in new and (await gateway.manager.status_of(name)).state == "failed"
    }
    settings_changed = settings != gateway._settings
    # The gateway's own order first: the view is built from it while connections come up.
    gateway._servers = new
    gateway._settings = settings
    if settings_changed:
        gateway._clashes_logged.clear()  # the clashes of the new naming are logged afresh
    diff = await gateway.manager.reload(new)
    for key in [key for key in gateway._subscriptions if key[0] in diff["removed"]]:
        del gateway._subscriptions[key]
    await gateway._rebuild()
    # A rebuild the catalog task had in flight may finish after this one with what it read
    # before: let it read once more.
    gateway._dirty.set()
    report = ReloadReport(
        added=tuple(name for name in new if name in diff["added"]),
        removed=tuple(name for name in old if name in diff["removed"]),
        restarted=tuple(name for name in new if name in diff["changed"]),
        unchanged=tuple(name for name in new if name in diff["unchanged"]),
        retried=tuple(name for name in new if name in diff["unchanged"] & failed_before),
        left_out=left_out,
        settings_changed=settings_changed,
    )
    logger.info("gateway reloaded: %s", report.describe())
    return report
