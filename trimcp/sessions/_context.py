"""What a request handler can do while it runs: ``RequestContext`` and ``SessionHandle``.

Both are thin views of the session actor. Handlers run in the session's reader task until
they first wait, then in a helper task of their own, always in the same trio thread, so
these methods touch the session's protocol state directly and synchronously (no await
between a check and its update), and queue bytes for its writer, tagged with the request
they belong to where there is one (a request's progress). They see the session only as a
``SessionPort`` (``_port.py``), so this module and the actor's need not import each other.

The identity a request was authorized as (``trimcp.auth``, over HTTP with ``[auth]``) is
the session's: the transport that checked the token binds a ``SessionIdentity`` to the
session's actor with ``bind_identity`` before the session sees a message, and refreshes it
as later requests bring newer tokens of the same principal. The binding is held weakly by
the transport's stream, so it goes when the session does.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, final

from trimcp.protocol import Phase

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.actors import ActorRef
    from trimcp.auth import Identity
    from trimcp.protocol import (
        ClientCapabilities,
        Implementation,
        JsonObject,
        JsonValue,
        KeptProgress,
        ProgressToken,
        RequestId,
        RequestMeta,
        ServerCapabilities,
    )

    from ._port import ProgressCallback, SessionPort

logger = logging.getLogger(__name__)

#: Messages a session's mailbox may hold before notifications posted to it are dropped.
MAX_QUEUED_NOTICES = 256
#: Dropped notifications after which a session that does not keep up is closed.
MAX_DROPPED_NOTICES = 1024
_DROPPED: weakref.WeakKeyDictionary[SessionPort, int] = weakref.WeakKeyDictionary()

#: RFC 5424 levels as MCP names them (Utilities > Logging), lowest first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@final
class SessionIdentity:
    """The identity a session's requests are authorized as; its transport keeps it current.

    The transport holds it (its stream does) for as long as the session lives; the session
    finds it through ``bind_identity``. ``identity`` is replaced when a later request of the
    same principal brings a newer token (more scopes, a later expiry).
    """

    __slots__ = ("__weakref__", "identity")

    def __init__(self, identity: Identity) -> None:
        self.identity = identity


# Session actor -> its identity. Weak values: an entry goes with the stream holding it.
_IDENTITIES: weakref.WeakValueDictionary[ActorRef, SessionIdentity] = weakref.WeakValueDictionary()


def identity_of(session: ActorRef) -> Identity | None:
    """Return the identity bound to the session actor ``session`` (``bind_identity``)."""
    holder = _IDENTITIES.get(session)
    return None if holder is None else holder.identity


def bind_identity(session: ActorRef, holder: SessionIdentity) -> None:
    """Make ``holder`` the identity of the session actor ``session`` (see the module docstring).

    Bind before the session handles a message, so that no request runs unauthenticated.
    """
    _IDENTITIES[session] = holder


@final
class SessionHandle:
    """A view of one client session for the server layer."""

    __slots__ = ("_session",)

    def __init__(self, session: SessionPort) -> None:
        self._session = session

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SessionHandle) and other._session is self._session

    def __hash__(self) -> int:
        return id(self._session)

    @property
    def open(self) -> bool:
        """False once the session has begun to close."""
        return self._session.connection.phase is not Phase.CLOSED

    @property
    def session_id(self) -> str:
        """The session's name (unique in the process)."""
        return self._session.name

    @property
    def client_info(self) -> Implementation | None:
        """The client's ``clientInfo``, once initialized."""
        return self._session.connection.client_info

    @property
    def client_capabilities(self) -> ClientCapabilities:
        """What the client declared at ``initialize``."""
        return self._session.connection.client_capabilities

    @property
    def protocol_version(self) -> str | None:
        """The negotiated protocol version, once initialized."""
        return self._session.connection.negotiated_version

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server declared to this client (as trimmed for the version)."""
        return self._session.connection.server_capabilities

    @property
    def request_meta(self) -> RequestMeta | None:
        """A per-request (2026-07-28) request's checked ``_meta``; None in a session."""
        return self._session.meta

    @property
    def log_level(self) -> str | None:
        """The level set by ``logging/setLevel``; None until the client sets one."""
        return self._session.log_level

    @property
    def identity(self) -> Identity | None:
        """Whom the session's token speaks for (``trimcp.auth``); None without authorization.

        Over HTTP with ``[auth]`` every request was checked before the session saw it; this
        is the identity of the latest one. stdio and unauthenticated listeners have none.
        """
        return self._session.identity

    def set_log_level(self, level: str) -> None:
        """Record the client's minimum level for ``notifications/message``.

        Raises:
            ValueError: not one of the RFC 5424 level names.
        """
        if level not in LOG_LEVELS:
            raise ValueError(
                f"unknown log level {level!r}; expected one of {', '.join(LOG_LEVELS)}"
            )
        self._session.log_level = level

    async def notify(self, method: str, params: JsonObject | None = None) -> None:
        """Send a notification to the client.

        Raises:
            LocalProtocolError: the phase or the declared capabilities forbid it.
        """
        await self._session.write(self._session.connection.send_notification(method, params))

    def notify_nowait(self, method: str, params: JsonObject | None = None) -> bool:
        """Queue a notification for the session's own task to send; never waits.

        For code outside the session (a registry change, another actor): the session checks
        and sends it in order with its other traffic, and skips it if its phase or the
        declared capabilities forbid it at that point. Returns False if the session is
        already closing, or if it is not keeping up.

        Slow-consumer policy: a session whose mailbox already holds ``MAX_QUEUED_NOTICES``
        messages (its client is not reading, so its writer is stuck) gets no more: the
        notification is dropped for it and counted, logged once; after
        ``MAX_DROPPED_NOTICES`` drops the session is stopped. The sender never waits and
        memory stays bounded, whatever one client does.
        """
        session = self._session
        if session.backlog >= MAX_QUEUED_NOTICES:
            dropped = _DROPPED[session] = _DROPPED.get(session, 0) + 1
            if dropped == 1:
                logger.warning(
                    "session %s is not keeping up with notifications; dropping them for it",
                    session.name,
                )
            if dropped == MAX_DROPPED_NOTICES:
                logger.warning(
                    "session %s: %d notifications dropped; closing it (slow consumer)",
                    session.name,
                    dropped,
                )
                session.abandon()
            return False
        return session.post_notification(method, params)

    def start_soon(self, fn: Callable[[], Awaitable[object]]) -> None:
        """Run ``fn()`` as background work of this session, past the request that started it.

        For work that outlives a response (a task's body): it is cancelled when the session
        ends. ``fn`` must handle its own errors; one that escapes ends the session.
        """
        self._session.start_soon(fn)

    async def log(self, level: str, data: JsonValue, logger: str | None = None) -> bool:
        """Send ``notifications/message`` if ``level`` passes the client's filter.

        Returns whether it was sent (not when below the level set with ``logging/setLevel``).
        """
        return await self._session.send_log(level, data, logger)

    async def request(
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> JsonObject:
        """Send a request to the client and wait for its result.

        Raises:
            LocalProtocolError: the client did not declare what this request needs.
            RequestTimeout: no answer in ``timeout`` seconds (a cancellation was sent).
            JsonRpcError: the client answered with an error.
            TransportClosed: the session ended first.
        """
        return await self._session.request(method, params, timeout=timeout, on_progress=on_progress)


@final
class RequestContext:
    """The request being handled: its id, its progress token, and its session."""

    __slots__ = ("_session", "progress_token", "request_id", "session")

    def __init__(
        self, session: SessionPort, request_id: RequestId, progress_token: ProgressToken | None
    ) -> None:
        self._session = session
        self.request_id = request_id
        self.progress_token = progress_token
        self.session = SessionHandle(session)

    @property
    def identity(self) -> Identity | None:
        """Whom the request's token speaks for; None without authorization (``SessionHandle``)."""
        return self.session.identity

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled this request (the handler is being cancelled)."""
        return self._session.connection.is_cancelled(self.request_id)

    async def log(self, level: str, data: JsonValue, logger: str | None = None) -> bool:
        """Send ``notifications/message`` as part of this request, if ``level`` passes the
        client's filter; return whether it was sent.

        Over HTTP it goes on the SSE stream of the request's POST, before the answer (MCP
        2025-11-25, Transports > Streamable HTTP: messages sent before the response "SHOULD
        relate to the originating client request",
        https://modelcontextprotocol.io/specification/2025-11-25/basic/transports), so a
        client sees a tool's log lines in order with its result, and one that opened no
        GET stream sees them at all.
        """
        return await self._session.send_log(level, data, logger, self.request_id)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Send ``notifications/progress`` if the client asked for progress.

        Returns whether anything was sent.

        Raises:
            LocalProtocolError: ``progress`` does not increase, or the request is answered.
        """
        if self.progress_token is None:
            return False
        session = self._session
        data = session.connection.send_progress(self.request_id, progress, total, message)
        # Tagged with its request: over HTTP it goes on the SSE stream of the request's POST.
        # Mostly it goes at once, with no schedule point, until the reader's queue is full.
        if not session.write_now(data, self.request_id):
            await session.write(data, self.request_id)
        return bool(data)

    def close_sse_stream(self) -> bool:
        """Close the HTTP connection this request's answer streams on, keeping the stream.

        Streamable HTTP (2025-11-25) lets a server close an SSE *connection* without ending
        the *stream*: the client waits ``retry`` ms and resumes with ``Last-Event-ID``,
        getting whatever was sent meanwhile (long-running calls, polling). Returns False
        where there is no such connection (stdio, WebSocket, JSON answers).
        """
        return self._session.close_request_stream(self.request_id)

    def keep_progress(self) -> ProgressReporter | None:
        """Keep this request's progress token for after its response (a task's progress).

        Call before the response is sent. None if the client asked for no progress.
        """
        kept = self._session.connection.keep_progress(self.request_id)
        return None if kept is None else ProgressReporter(self._session, kept)


@final
class ProgressReporter:
    """Progress for a request already answered, e.g. a task's (Tasks > Progress)."""

    __slots__ = ("_kept", "_session")

    def __init__(self, session: SessionPort, kept: KeptProgress) -> None:
        self._session = session
        self._kept = kept

    @property
    def token(self) -> ProgressToken:
        """The kept progress token."""
        return self._kept.token

    async def report(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Send ``notifications/progress`` with the kept token; False once finished.

        Raises:
            LocalProtocolError: ``progress`` does not strictly increase.
        """
        if self._kept.closed or not SessionHandle(self._session).open:
            return False
        data = self._session.connection.send_kept_progress(self._kept, progress, total, message)
        return await self._session.write(data)

    def finish(self) -> None:
        """Stop: the task is terminal, the token is no longer valid."""
        self._kept.closed = True
