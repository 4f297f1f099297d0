"""One request of the per-request era (MCP 2026-07-28), served without a session.

From 2026-07-28 on a request carries its version and the client's capabilities in ``_meta``
and nothing outlives it: no session, no server-to-client requests, no notifications but the
request's own progress and log messages, which travel before its answer on the same stream
(MCP 2026-07-28, Basic, https://modelcontextprotocol.io/specification/2026-07-28/basic).
``ModernRequest`` is what the views in ``_context`` (``RequestContext``, ``SessionHandle``)
see of such a request: a ``SessionPort`` over a ``ServerConnection`` made operating for it
(``ServerConnection.for_request``), so a handler is written once and serves both eras.

The transport hands it the parsed request, the checked ``RequestMeta`` and a
``RequestSink`` for the request's own notifications (HTTP: the POST's SSE stream, opened
when the first one comes; stdio: the process's output), then awaits ``run``, which returns
the encoded response. Cancelling ``run`` (the client closed the request's stream, or sent
``notifications/cancelled`` on stdio) cancels the handler; nothing more is sent for it.
``abandon`` is the server's own way to give up on a request whose stream does not keep up
(a ``subscriptions/listen`` whose client reads nothing, ``_listen.py``): the handler is
cancelled even where it waits to write, and ``run`` returns None, so its transport ends the
stream without an answer.

What a session offers and a request does not: ``request`` (server-to-client requests were
replaced by multi round-trip results, which ``trimcp.server.Context`` builds), posted and
broadcast notifications, and background work that outlives the request.
"""

from __future__ import annotations

import contextvars
import logging
from contextvars import ContextVar
from typing import TYPE_CHECKING, Final, Protocol, final

import trio

from trimcp.errors import JsonRpcError, LocalProtocolError
from trimcp.protocol import ErrorResponse, ServerConnection, encode_message, error_object_for
from trimcp.telemetry import SLOT, Peer, result_outcome

from ._context import LOG_LEVELS, RequestContext
from ._inline import run_inline
from ._options import SessionOptions, server_options

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.auth import Identity
    from trimcp.protocol import JsonObject, JsonValue, Request, RequestId, RequestMeta
    from trimcp.telemetry import Observer, RequestProbe

    from ._handler import RequestHandler
    from ._port import ProgressCallback

__all__ = ["ModernRequest", "RequestSink", "serving_request"]

logger = logging.getLogger(__name__)

# The modern request whose handler runs in this context: how a ``Listener``, made deep in
# a handler, finds the request to abandon when its client stops reading.
_SERVING: Final[ContextVar[ModernRequest | None]] = ContextVar(
    "trimcp_modern_request", default=None
)


# Where a request made without a lane comes from: the HTTP endpoint is the one place that
# does (a lane passes its session's peer).
_HTTP: Final = Peer("http")


def serving_request() -> ModernRequest | None:
    """Return the modern request being served in this context (None: none is)."""
    return _SERVING.get()


class RequestSink(Protocol):
    """Where a modern request's own notifications go, before its response."""

    def send_nowait(self, data: bytes) -> bool:
        """Send one encoded message if that needs no waiting; False: ``send`` it."""
        ...

    async def send(self, data: bytes) -> None:
        """Send one encoded message, waiting for room if need be."""
        ...


@final
class ModernRequest:
    """One modern request, as its handler's views see it (see the module docstring)."""

    __slots__ = (
        "_handler",
        "_identity",
        "_observed_by_telemetry",
        "_peer",
        "_probe",
        "_request",
        "_scope",
        "_sink",
        "abandoned",
        "connection",
        "error_code",
        "log_level",
        "meta",
    )

    def __init__(  # noqa: PLR0913 - what a request is served with, each its own
        self,
        handler: RequestHandler,
        request: Request,
        meta: RequestMeta,
        sink: RequestSink,
        *,
        identity: Identity | None = None,
        options: SessionOptions | None = None,
        peer: Peer = _HTTP,
    ) -> None:
        chosen = options or SessionOptions()
        self._observed_by_telemetry = chosen.observed
        self.connection = ServerConnection.for_request(
            handler.server_info,
            handler.capabilities,
            server_options(handler.instructions, chosen.max_message_size, chosen.legacy_aliases),
            meta,
        )
        self.meta: RequestMeta | None = meta
        # None: the client set no ``logLevel``, so it gets no ``notifications/message``.
        self.log_level = meta.log_level
        self._handler = handler
        self._request = request
        self._sink = sink
        self._identity = identity
        self._peer = peer
        # Sees the request through while telemetry is on (``_observed``).
        self._probe: RequestProbe | None = None
        #: The JSON-RPC error code ``run`` answered with; None for a result.
        self.error_code: int | None = None
        #: True once ``abandon`` gave up on the request.
        self.abandoned = False
        # Encloses the handler; only ``abandon`` cancels it.
        self._scope = trio.CancelScope()

    async def run(self) -> bytes | None:
        """Serve the request; return its encoded response (a result or an error).

        Returns None if the request was abandoned (``abandon``): nothing more may be written
        for it, not even an answer.
        """
        request = self._request
        try:
            event = self.connection.accept(request)
        except (JsonRpcError, LocalProtocolError) as exc:
            return self._error(request.id, exc)
        context = RequestContext(self, request.id, event.progress_token)
        answer: bytes | None = None
        serving = _SERVING.set(self)
        try:
            with self._scope:
                observer = SLOT.observer if self._observed_by_telemetry else None
                if observer is None:
                    answer = await self._answer(request, context)
                else:
                    answer = await self._observed(observer, request, context)
        finally:
            _SERVING.reset(serving)
        if self.abandoned:  # even if the handler finished before it saw the cancellation
            logger.debug("%s %r: abandoned; no answer is sent", request.method, request.id)
            return None
        return answer

    async def _observed(
        self, observer: Observer, request: Request, context: RequestContext
    ) -> bytes:
        """``_answer`` seen by telemetry: the handler runs in a context of its own.

        The observer writes into a copy of the context (the request's span and log fields
        are its handler's, never the transport task's, which serves other requests after
        this one); the copy is driven inline, so this costs no task.
        """
        meta = self.meta
        run_context = contextvars.copy_context()
        probe = self._probe = observer.server_request(
            request.method,
            request.id,
            request.params,
            self._peer,
            None if meta is None else meta.protocol_version,
            run_context,
        )
        try:
            return await run_inline(self._answer(request, context), run_context, _nothing)
        except BaseException:  # cancelled or abandoned: recorded, never swallowed
            probe.finish("cancelled")
            raise

    async def _answer(self, request: Request, context: RequestContext) -> bytes:
        try:
            result = await self._handler.handle_request(request, context)
        except Exception as exc:
            if not isinstance(exc, JsonRpcError):
                logger.error(
                    "handler for %s (id %r) failed",
                    request.method,
                    request.id,
                    exc_info=exc,
                    extra={"method": request.method},
                )
            answer = self._error(request.id, exc, tracked=True)
            if self._probe is not None:
                self._probe.finish("error", self.error_code)
            return answer
        if self._probe is not None:
            self._probe.finish(result_outcome(request.method, result))
        if "resultType" not in result:
            # Every result carries it from 2026-07-28 on (Basic > ResultType).
            result = {**result, "resultType": "complete"}
        try:
            return self.connection.send_result(request.id, result)
        except LocalProtocolError as exc:
            logger.error("result of %s could not be sent: %s", request.method, exc)
            return self._error(request.id, exc, tracked=True)

    def _error(self, request_id: RequestId, exc: Exception, *, tracked: bool = False) -> bytes:
        error = error_object_for(exc)
        self.error_code = error.code
        if tracked:
            return self.connection.send_error(request_id, error)
        return encode_message(ErrorResponse(id=request_id, error=error))

    # --- SessionPort ------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """How logs name this request."""
        return f"request {self._request.id!r}"

    @property
    def identity(self) -> Identity | None:
        """Whom the request's access token speaks for, if the transport checked one."""
        return self._identity

    @property
    def backlog(self) -> int:
        """Nothing is ever queued for a request."""
        return 0

    def start_soon(self, fn: Callable[[], Awaitable[object]]) -> None:
        """Refuse: nothing outlives a modern request (tasks are an extension of their own).

        Raises:
            LocalProtocolError: always.
        """
        raise LocalProtocolError(
            "a 2026-07-28 request has no session to run background work in; "
            "finish the work before returning"
        )

    async def write(
        self, data: bytes, related: RequestId | None = None, *, final: bool = False
    ) -> bool:
        """Send one of the request's own messages (progress, a log line).

        Returns False, sending nothing, once the request was abandoned.
        """
        if self.abandoned:
            return False
        if data and not self._sink.send_nowait(data):
            await self._sink.send(data)
        return True

    def write_now(self, data: bytes, related: RequestId | None = None) -> bool:
        """Send one message if that needs no waiting; False: ``write`` it instead."""
        return self.abandoned or not data or self._sink.send_nowait(data)

    def post_notification(self, method: str, params: JsonObject | None) -> bool:
        """Nothing but the request's own messages may reach its client: never sent."""
        return False

    async def send_log(
        self,
        level: str,
        data: JsonValue,
        logger_name: str | None,
        related: RequestId | None = None,
    ) -> bool:
        """Send ``notifications/message`` only at or above the request's ``logLevel``.

        Without one, nothing: "the server MUST NOT send notifications/message for that
        request" (MCP 2026-07-28, Basic > ``_meta``).
        """
        threshold = self.log_level
        if threshold is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
            return False
        params: JsonObject = {"level": level, "data": data}
        if logger_name is not None:
            params["logger"] = logger_name
        await self.write(self.connection.send_notification("notifications/message", params))
        return True

    async def request(
        self,
        method: str,
        params: JsonObject | None,
        *,
        timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> JsonObject:
        """Refuse: 2026-07-28 has no server-to-client requests.

        Raises:
            LocalProtocolError: always; ``Context.elicit``, ``sample`` and ``list_roots``
                ask through a multi round-trip result instead.
        """
        raise LocalProtocolError(
            f"cannot send {method} to a 2026-07-28 client: the revision has no "
            "server-to-client requests; use Context.elicit, Context.sample or "
            "Context.list_roots, which ask through an InputRequiredResult"
        )

    def close_request_stream(self, request_id: RequestId) -> bool:
        """No resumable streams in 2026-07-28: never closed this way."""
        return False

    def abandon(self) -> None:
        """Give up on the request: its stream does not keep up (see the module docstring).

        Cancels the handler, wherever it waits (a write its client does not take included,
        unless the transport shields it: then once that write is done); from now on nothing
        is written for the request, and ``run`` returns None. Idempotent.
        """
        self.abandoned = True
        self._scope.cancel()


def _nothing() -> None:
    """What ``run_inline`` does when a modern request's handler first waits: nothing."""
