"""The request log: fields on the log records written while a request is handled, and a line
per request served.

``RequestLog`` is an observer (``trimcp._logging.configure_logging`` installs it): when a
server request starts, it puts the request's fields (``method``, ``id``, ``session``: the
first 8 characters of a Streamable HTTP session id, and ``tool`` or ``prompt``) in a context
variable of the handler's own context, where a logging filter finds them and adds them to
every record (a handler's ``logger.info``, trimcp's own errors), and with ``lines`` it logs
one INFO line per request at its end, with ``outcome`` and ``duration_ms`` too
(``[logging] requests``).

Never a parameter value, an argument, a token or a header: only what names the request.
"""

from __future__ import annotations

import logging
import time
from contextvars import ContextVar
from typing import TYPE_CHECKING, Final, final

from ._seam import ServerRequestsOnly

if TYPE_CHECKING:
    from collections.abc import Mapping
    from contextvars import Context

    from trimcp.protocol import JsonObject, RequestId

    from ._seam import Outcome, Peer, RequestProbe

__all__ = ["REQUEST_LOGGER", "RequestLog", "request_fields"]

#: The logger of the per-request lines.
REQUEST_LOGGER: Final = "trimcp.requests"

_FIELDS: Final[ContextVar[Mapping[str, object] | None]] = ContextVar(
    "trimcp_request_fields", default=None
)
# A Streamable HTTP session id addresses the session (whoever has it may use it): its first
# 8 characters name it in logs. A session's own short name (``Session-12``) is kept whole.
_SESSION_PREFIX: Final = 8
_SHORT_NAME: Final = 16

logger = logging.getLogger(REQUEST_LOGGER)


def request_fields() -> Mapping[str, object] | None:
    """Return the fields of the request being handled in this context (None: none is)."""
    return _FIELDS.get()


@final
class RequestLog(ServerRequestsOnly):
    """Request fields for log records, and with ``lines`` a log line per request served."""

    __slots__ = ("lines",)

    def __init__(self, *, lines: bool = False) -> None:
        """``lines``: log one INFO line per request served (``[logging] requests``)."""
        self.lines = lines

    def server_request(  # noqa: PLR0913, PLR0917  # one request's facts, positional: hot path
        self,
        method: str,
        request_id: RequestId,
        params: JsonObject | None,
        peer: Peer,
        protocol_version: str | None,
        context: Context | None,
    ) -> RequestProbe:
        """Name the request for the records its handler writes (in ``context``)."""
        fields: dict[str, object] = {"method": method, "id": request_id}
        session = peer.session_id
        if session is not None:
            short = len(session) <= _SHORT_NAME
            fields["session"] = session if short else session[:_SESSION_PREFIX]
        if params is not None and method in ("tools/call", "prompts/get"):
            name = params.get("name")
            if isinstance(name, str):
                fields["tool" if method == "tools/call" else "prompt"] = name
        if context is not None:
            context.run(_FIELDS.set, fields)  # the handler's own context: ends with it
        return _Logged(fields, time.perf_counter() if self.lines else None)


@final
class _Logged:
    __slots__ = ("_fields", "_start")

    def __init__(self, fields: dict[str, object], start: float | None) -> None:
        self._fields = fields
        self._start = start

    def finish(self, outcome: Outcome, error_code: int | None = None) -> None:
        if self._start is None:
            return
        milliseconds = round((time.perf_counter() - self._start) * 1000.0, 3)
        extra = {**self._fields, "outcome": outcome, "duration_ms": milliseconds}
        if error_code is not None:
            extra["code"] = error_code
        logger.info(
            "%s %r %s in %.3f ms",
            self._fields["method"],
            self._fields["id"],
            outcome,
            milliseconds,
            extra=extra,
        )
