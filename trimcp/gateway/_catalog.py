"""The gateway's catalog: the merged ``View`` of the live backends, kept fresh, and paged.

One task (``Catalog.run``, the ``catalog`` child of the gateway's supervisor) re-reads the
backends' catalogs whenever a connection changes state or catalog (``mark_dirty``, called
from the connection actors' ``on_change``), rebuilds the ``View`` (``_view.py``) and tells
every open session ``notifications/{tools,prompts,resources}/list_changed`` for each kind
whose offer changed (MCP 2025-11-25, Server Features > Tools/Prompts/Resources > List
Changed Notification). A clash (two backends showing the same name) is logged once per name.

``*/list`` pages the merged view with ``trimcp.server.Paginator`` (Utilities > Pagination:
cursors are opaque; a cursor from before a change is refused rather than skipping items).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, final

import trio

from trimcp.server import CursorCodec, Paginator, snapshot_of

from ._view import View, build_view

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trimcp.client import ConnectionManager, ServerConfig
    from trimcp.config import GatewaySettings
    from trimcp.protocol import JsonObject
    from trimcp.sessions import SessionHandle

    from ._view import Route

__all__ = ["LISTS", "Catalog"]

logger = logging.getLogger(__name__)

_LIST_CHANGED = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}

#: ``*/list`` methods: the result's key and the ``View`` table listed.
LISTS = {
    "tools/list": ("tools", "tools"),
    "prompts/list": ("prompts", "prompts"),
    "resources/list": ("resources", "resources"),
    "resources/templates/list": ("resourceTemplates", "templates"),
}


@final
class Catalog:
    """What the gateway offers now, rebuilt when a backend changes (module docstring).

    Args:
        manager: the backends' connections (their live catalogs).
        servers: every backend, in order: the first wins a name clash.
        settings: naming and filtering (``[gateway]``).
        sessions: the gateway's open sessions, told ``list_changed`` (shared, not copied).
        page_size: items per ``*/list`` page.
    """

    def __init__(
        self,
        manager: ConnectionManager,
        servers: dict[str, ServerConfig],
        settings: GatewaySettings,
        sessions: set[SessionHandle],
        page_size: int,
    ) -> None:
        self._manager = manager
        #: Backends and settings in force; a reload (``_reload.py``) replaces them.
        self.servers = servers
        self.settings = settings
        self._sessions = sessions
        self._paginator = Paginator(CursorCodec(), page_size)
        self.dirty = trio.Event()
        self.clashes_logged: set[tuple[str, str]] = set()
        self.view = View()

    def mark_dirty(self) -> None:
        """A backend's connection changed state or catalog (called in its actor's task)."""
        self.dirty.set()

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Start connecting every backend, then rebuild the view whenever one changes."""
        for server, config in self.servers.items():
            if config.enabled and config.auto_connect:
                await self._manager.start_connecting(server)
        await self.rebuild()
        task_status.started()
        while True:
            await self.dirty.wait()
            self.dirty = trio.Event()
            await self.rebuild()

    async def rebuild(self) -> None:
        """Read the live catalogs afresh; tell the sessions what changed."""
        live = dict(await self._manager.live_catalogs())
        ordered = [(server, live[server]) for server in self.servers if server in live]
        new = build_view(self.settings, ordered)
        old, self.view = self.view, new
        for clash in new.clashes:
            if clash not in self.clashes_logged:
                self.clashes_logged.add(clash)
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

    def page(self, method: str, params: JsonObject) -> JsonObject:
        """One page of a ``*/list`` method of ``LISTS``."""
        key, attribute = LISTS[method]
        table: Mapping[str, Route] = getattr(self.view, attribute)
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
