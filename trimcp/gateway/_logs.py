"""Log relay: the backends' ``notifications/message`` go to the downstream clients that want them.

The two eras scope log messages differently. MCP 2025-11-25 (Server Features > Utilities >
Logging, https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging):
a session's ``logging/setLevel`` sets the least severe level it is sent, and the server
sends log messages on the session whenever it likes. MCP 2026-07-28 removed
``logging/setLevel``: a request that wants its log lines names a ``logLevel`` in its
``_meta``, gets them on its own response stream, and without one "the server MUST NOT send
notifications/message for that request" (Basic > ``_meta``,
https://modelcontextprotocol.io/specification/2026-07-28/basic).

So a backend's log line goes:

* to every downstream **session** whose level lets it through (``logging/setLevel`` is kept
  per session, ``SessionHandle.log_level``; without one a session gets every line, as a
  2025-11-25 server may send any), whichever era the backend speaks;
* to a **2026-07-28 caller** in flight on that backend, at or above its ``logLevel``, when
  it is the only client the backend is serving: nothing on the wire says which request a
  line belongs to (stdio), and the gateway does not show one client another's lines.

A 2025-11-25 backend sends at the level it keeps for the gateway's session to it (the
gateway never sets one, so a backend's own default: usually everything), and the gateway
filters. A 2026-07-28 backend sends only what each request asks for, so every request the
gateway forwards asks for the least severe level any recipient wants (``LogRelay.wanted``):
the sessions' levels and the caller's own. The client session cannot leave a level out
once it listens to logs, so "nobody wants any" asks for ``emergency`` only.

The backend's own ``logger`` is replaced by the backend's name, so the client can tell who
spoke (a backend that wants finer detail can put it in ``data``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, final

from trimcp.errors import InvalidParams
from trimcp.sessions import LOG_LEVELS

if TYPE_CHECKING:
    from trimcp.client import LogMessage
    from trimcp.protocol import JsonObject
    from trimcp.sessions import RequestContext, SessionHandle

    from ._relay import Caller, InFlight

__all__ = ["QUIET", "LogRelay", "set_level"]

#: What a 2026-07-28 backend is asked for when no recipient wants any log line.
QUIET: Final = LOG_LEVELS[-1]


def set_level(params: JsonObject, context: RequestContext) -> JsonObject:
    """``logging/setLevel``: the session filters the relayed log messages by it."""
    try:
        context.session.set_log_level(str(params.get("level")))
    except ValueError as exc:
        raise InvalidParams(str(exc), {"level": params.get("level")}) from exc
    return {}


def _passes(level: str, wanted: str | None) -> bool:
    return wanted is None or LOG_LEVELS.index(level) >= LOG_LEVELS.index(wanted)


@final
class LogRelay:
    """Relays the backends' log lines (module docstring).

    Args:
        sessions: the gateway's sessions and listen streams (shared, not copied).
        listeners: which of ``sessions`` are listen streams (they carry no log lines).
        inflight: the callers each backend is serving.
    """

    def __init__(
        self, sessions: set[SessionHandle], listeners: set[SessionHandle], inflight: InFlight
    ) -> None:
        self._sessions = sessions
        self._listeners = listeners
        self._inflight = inflight

    def wanted(self, caller: Caller | None) -> str:
        """The level a 2026-07-28 backend is asked for on a request of ``caller``.

        Asked on every request to such a backend: it stops at the first recipient that
        wants everything (a session that set no level, the usual case).
        """
        least = LOG_LEVELS.index(QUIET)
        if caller is not None and caller.log_level is not None:
            least = LOG_LEVELS.index(caller.log_level)
        for session in self._sessions:
            if least == 0:
                break
            if self._hears(session):
                least = min(least, LOG_LEVELS.index(session.log_level or LOG_LEVELS[0]))
        return LOG_LEVELS[least]

    def _hears(self, session: SessionHandle) -> bool:
        """Whether ``session`` gets session-wide log lines: an open, initialized session
        (not a listen stream, nor a stream whose client only sends 2026-07-28 requests)."""
        return (
            session.open
            and session.protocol_version is not None
            and (session not in self._listeners)
        )

    async def relay(self, backend: str, message: LogMessage) -> None:
        """Send ``message`` of ``backend`` to each recipient whose level lets it through."""
        level = message.level if message.level in LOG_LEVELS else "info"
        params: JsonObject = {"level": level, "logger": backend, "data": message.data}  # type: ignore[dict-item]
        for session in list(self._sessions):
            if self._hears(session) and _passes(level, session.log_level):
                session.notify_nowait("notifications/message", params)
        caller = self._inflight.sole_caller(backend)
        wanted = None if caller is None or not caller.modern else caller.log_level
        if caller is not None and wanted is not None and _passes(level, wanted):
            await caller.log(level, params["data"], backend)
