"""Log relay: the backends' ``notifications/message`` go to every session that wants them.

MCP 2025-11-25, Server Features > Utilities > Logging
(https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging): a
session's ``logging/setLevel`` sets the least severe level it is sent; the gateway keeps that
per session (``SessionHandle.log_level``) and filters each relayed message by it. The
backend's own ``logger`` is replaced by the backend's name, so the client can tell who spoke
(a backend that wants finer detail can put it in ``data``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trimcp.errors import InvalidParams
from trimcp.sessions import LOG_LEVELS

if TYPE_CHECKING:
    from collections.abc import Iterable

    from trimcp.client import LogMessage
    from trimcp.protocol import JsonObject
    from trimcp.sessions import RequestContext, SessionHandle

__all__ = ["relay_log", "set_level"]


def set_level(params: JsonObject, context: RequestContext) -> JsonObject:
    """``logging/setLevel``: the session filters the relayed log messages by it."""
    try:
        context.session.set_log_level(str(params.get("level")))
    except ValueError as exc:
        raise InvalidParams(str(exc), {"level": params.get("level")}) from exc
    return {}


def relay_log(sessions: Iterable[SessionHandle], backend: str, message: LogMessage) -> None:
    """Send ``message`` of ``backend`` to each open session whose level lets it through."""
    level = message.level if message.level in LOG_LEVELS else "info"
    params: JsonObject = {"level": level, "logger": backend, "data": message.data}  # type: ignore[dict-item]
    for session in list(sessions):
        wanted = session.log_level
        if wanted is not None and LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
            continue
        if session.open:
            session.notify_nowait("notifications/message", params)
