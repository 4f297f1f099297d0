"""The live sessions of one server: resource subscriptions and list-change broadcasts.

Sessions announce themselves through ``RequestHandler.session_opened``/``session_closed``
and are forgotten (with their subscriptions) when they close. A notification goes to each
open session on its own: a session that is not initialized yet, that did not get the
capability the notification needs when it started, or that is closing, is skipped rather
than failing the others (the protocol core refuses such sends with
``LocalProtocolError``).

List-change notifications follow synchronous registry changes (``add_tool`` is a plain
method), so they are posted to each session's own task (``SessionHandle.notify_nowait``),
which sends them in order with its other traffic and skips them where the phase or the
session's capabilities forbid: the change never waits for slow clients.
"""

from __future__ import annotations

import logging
import typing
from typing import TYPE_CHECKING

from trimcp.errors import LocalProtocolError, TransportClosed

if TYPE_CHECKING:
    from collections.abc import Iterable

    from trimcp.protocol import JsonObject
    from trimcp.sessions import SessionHandle

__all__ = ["SessionSet"]

logger = logging.getLogger(__name__)


async def _notify(session: SessionHandle, method: str, params: JsonObject | None) -> bool:
    if not session.open:
        return False
    try:
        await session.notify(method, params)
    except (LocalProtocolError, TransportClosed) as exc:
        logger.debug("session %s: %s not sent: %s", session.session_id, method, exc)
        return False
    return True


@typing.final
class SessionSet:
    """Open sessions and the resource URIs each subscribed to."""

    __slots__ = ("_subscriptions",)

    def __init__(self) -> None:
        self._subscriptions: dict[SessionHandle, set[str]] = {}

    def __len__(self) -> int:
        return len(self._subscriptions)

    def opened(self, session: SessionHandle) -> None:
        """Track a new session."""
        self._subscriptions.setdefault(session, set())

    def closed(self, session: SessionHandle) -> None:
        """Forget a session and its subscriptions."""
        self._subscriptions.pop(session, None)

    def subscribe(self, session: SessionHandle, uri: str) -> None:
        """Record that ``session`` wants ``notifications/resources/updated`` for ``uri``."""
        self._subscriptions.setdefault(session, set()).add(uri)

    def unsubscribe(self, session: SessionHandle, uri: str) -> None:
        """Drop one subscription (unknown ones are ignored)."""
        self._subscriptions.get(session, set()).discard(uri)

    def subscribers(self, uri: str) -> list[SessionHandle]:
        """Return the sessions subscribed to ``uri``."""
        return [session for session, uris in self._subscriptions.items() if uri in uris]

    async def notify(
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        to: Iterable[SessionHandle] | None = None,
    ) -> int:
        """Send a notification to ``to`` (default: every session); return how many got it.

        Sessions are served one after another; a full write queue makes this wait.
        """
        targets = list(self._subscriptions if to is None else to)
        sent = 0
        for session in targets:
            sent += await _notify(session, method, params)
        return sent

    def broadcast_soon(self, method: str) -> int:
        """Post a parameterless notification to every open session; return how many."""
        return sum(session.notify_nowait(method) for session in list(self._subscriptions))
