"""What a session needs from the server above it: the ``RequestHandler`` seam.

``trimcp.server`` implements it; tests may implement it directly. A session owns the wire
(lifecycle, ids, cancellation, progress, framing) and calls the handler only for requests and
notifications that passed the protocol core's checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trimcp.protocol import (
        Implementation,
        JsonObject,
        Notification,
        Request,
        ServerCapabilities,
    )

    from ._context import RequestContext, SessionHandle


class RequestHandler(Protocol):
    """The server behind a session.

    Implementers guarantee: ``handle_request`` returns the JSON result object or raises a
    ``JsonRpcError`` (``MethodNotFound``, ``InvalidParams``, ``ResourceNotFound``...) for an
    error response; any other exception becomes -32603 with a generic message (the traceback
    is logged, never sent). It must stop promptly when cancelled: the client's
    ``notifications/cancelled`` cancels it. ``handle_notification`` never answers anything.
    """

    @property
    def server_info(self) -> Implementation:
        """Name and version sent in ``serverInfo``."""
        ...

    @property
    def capabilities(self) -> ServerCapabilities:
        """What the server declares at ``initialize``."""
        ...

    @property
    def instructions(self) -> str | None:
        """The optional ``instructions`` hint for the client's model."""
        ...

    async def handle_request(self, request: Request, context: RequestContext) -> JsonObject:
        """Answer one request (see the class docstring)."""
        ...

    def header_parameters(self, tool: str) -> Mapping[tuple[str, ...], str] | None:
        """The ``Mcp-Param-*`` headers a ``tools/call`` of ``tool`` mirrors (2026-07-28).

        Argument path -> header name, from the ``x-mcp-header`` annotations of the tool's
        input schema (``trimcp.protocol.header_parameters``); None or empty: none (also for
        an unknown tool, which the call itself then refuses).
        """
        ...

    async def handle_notification(self, notification: Notification, session: SessionHandle) -> None:
        """React to a client notification (``notifications/roots/list_changed``, ...)."""
        ...

    def session_opened(self, session: SessionHandle) -> None:
        """A session started (before its handshake): the server may track it for broadcasts."""
        ...

    def session_closed(self, session: SessionHandle) -> None:
        """A session ended: forget it (subscriptions, broadcast lists). Must not raise."""
        ...
