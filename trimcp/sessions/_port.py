"""``SessionPort``: the session actor as its views see it (``RequestContext`` and friends).

The views in ``_context`` hand a request handler what it may do with its session; the
``Session`` actor in ``_session`` builds them for every request. Each needs the other, so
what the views need is declared here, apart from both: the views are written against this
protocol and the actor satisfies it, and neither module imports the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.auth import Identity
    from trimcp.protocol import (
        JsonObject,
        JsonValue,
        ProgressParams,
        RequestId,
        RequestMeta,
        ServerConnection,
    )

__all__ = ["ProgressCallback", "SessionPort"]

#: Gets each progress report the client sends for a server-to-client request.
ProgressCallback: TypeAlias = "Callable[[ProgressParams], Awaitable[None]]"


class SessionPort(Protocol):
    """What ``SessionHandle``, ``RequestContext`` and ``ProgressReporter`` use of a session.

    Implementers guarantee that everything here is called from the session's own trio
    thread, and that the synchronous members never wait (no schedule point between a check
    of ``connection`` and its update).
    """

    #: The sans-IO protocol core of the session.
    connection: ServerConnection
    #: The level set by ``logging/setLevel``; None until the client sets one.
    log_level: str | None
    #: A per-request (2026-07-28) request's ``_meta``; None for a session.
    meta: RequestMeta | None

    @property
    def name(self) -> str:
        """The session's name (unique in the process)."""
        ...

    @property
    def identity(self) -> Identity | None:
        """Whom the session's (or the request's) access token speaks for, if anyone."""
        ...

    @property
    def backlog(self) -> int:
        """Messages waiting in the session's mailbox (a slow client's grow)."""
        ...

    def start_soon(self, fn: Callable[[], Awaitable[object]]) -> None:
        """Run ``fn()`` as a helper task of the session; an escaping error ends it."""
        ...

    async def write(
        self, data: bytes, related: RequestId | None = None, *, final: bool = False
    ) -> bool:
        """Send one encoded message; False if it was dropped (the session is closing)."""
        ...

    def write_now(self, data: bytes, related: RequestId | None = None) -> bool:
        """Send one message if it goes at once; False: ``write`` it instead. Never waits."""
        ...

    def post_notification(self, method: str, params: JsonObject | None) -> bool:
        """Queue a notification for the session's own task; False if it is gone."""
        ...

    async def send_log(
        self,
        level: str,
        data: JsonValue,
        logger_name: str | None,
        related: RequestId | None = None,
    ) -> bool:
        """Send ``notifications/message`` unless ``level`` is below the client's filter."""
        ...

    async def request(
        self,
        method: str,
        params: JsonObject | None,
        *,
        timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> JsonObject:
        """Send a request to the client and wait for its result."""
        ...

    def close_request_stream(self, request_id: RequestId) -> bool:
        """Close the connection a request's answer streams on, if the stream has such."""
        ...

    def abandon(self) -> None:
        """Give up on a client that does not keep up: close the stream and stop."""
        ...
