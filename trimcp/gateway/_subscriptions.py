"""Resource subscriptions, reference-counted per (backend, URI), restored on reconnect.

MCP 2025-11-25, Server Features > Resources > Subscriptions
(https://modelcontextprotocol.io/specification/2025-11-25/server/resources#subscriptions):
the backend is subscribed for the first downstream subscriber of a URI (a session's
``resources/subscribe``, or a 2026-07-28 ``subscriptions/listen`` naming it, ``_modern.py``)
and unsubscribed when the last one leaves; its ``notifications/resources/updated`` go to
every subscriber. How the backend is subscribed depends on its era, which
``ClientSession.subscribe_resource`` knows: ``resources/subscribe`` for a 2025-11-25 backend,
its ``subscriptions/listen`` stream opened again with the URI for a 2026-07-28 one (MCP
2026-07-28, Basic > Patterns > Subscriptions,
https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions).
A session that closes just leaves the set (the backend stays subscribed: one more
notification is cheaper than an unsubscribe racing a new subscriber).

A backend that reconnects is a new session that knows nothing of the old one's
subscriptions: ``restore`` re-subscribes, on the new session and before the connection is
announced as connected, every URI of that backend that still has downstream subscribers. A
URI it now refuses (gone from the new process) is logged and its subscribers kept, so they
hear of it again if a later connection has it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, final

from trimcp.client import SessionUpstream

if TYPE_CHECKING:
    from trimcp.client import Upstream
    from trimcp.protocol import JsonObject
    from trimcp.sessions import SessionHandle

    from ._routing import Router

__all__ = ["Subscriptions"]

logger = logging.getLogger(__name__)


@final
class Subscriptions:
    """Who is subscribed to which backend URI (module docstring)."""

    def __init__(self, router: Router) -> None:
        self._router = router
        #: (backend, URI) -> the sessions subscribed to it (a reload drops a removed backend's).
        self.members: dict[tuple[str, str], set[SessionHandle]] = {}

    def uris(self, backend: str) -> list[str]:
        """The URIs of ``backend`` with at least one downstream subscriber."""
        return [
            uri for (owner, uri), members in self.members.items() if owner == backend and members
        ]

    async def handle(self, method: str, params: JsonObject, session: SessionHandle) -> JsonObject:
        """``resources/subscribe`` or ``resources/unsubscribe`` from ``session``."""
        uri = params.get("uri")
        backend = self._router.resource_backend(uri)
        assert isinstance(uri, str)
        key = (backend, uri)
        members = self.members.get(key)
        if method == "resources/subscribe":
            if members is None:
                await self._router.forward(backend, method, {"uri": uri})
                # Another subscriber may have come while the backend was asked.
                members = self.members.setdefault(key, set())
            members.add(session)
            return {}
        if members is not None:
            members.discard(session)
            if not members:
                del self.members[key]
                await self._router.forward(backend, method, {"uri": uri})
        return {}

    def relay_updated(self, backend: str, uri: str) -> None:
        """``notifications/resources/updated`` of ``backend``: to each subscribed session."""
        for session in list(self.members.get((backend, uri), ())):
            if session.open:
                session.notify_nowait("notifications/resources/updated", {"uri": uri})

    def forget(self, session: SessionHandle) -> None:
        """``session`` closed: it leaves every set (the backend stays subscribed)."""
        for key in list(self.members):
            members = self.members[key]
            members.discard(session)
            if not members:
                del self.members[key]

    async def restore(self, backend: str, upstream: Upstream) -> None:
        """Re-subscribe ``upstream`` (a new connection of ``backend``) to its URIs in use."""
        if not isinstance(upstream, SessionUpstream):
            return
        for uri in self.uris(backend):
            try:
                await upstream.session.subscribe_resource(uri)
            except Exception as exc:  # noqa: BLE001  (one refused URI must not fail the connection)
                logger.warning(
                    "gateway: %r could not re-subscribe to %r after reconnecting: %s",
                    backend,
                    uri,
                    exc,
                )
            else:
                logger.debug("gateway: %r re-subscribed to %r", backend, uri)
