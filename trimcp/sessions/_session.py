"""The ``Session`` actor: one MCP client connection, from handshake to close.

A session owns a ``ServerConnection`` (the sans-IO core), the transport's ``MessageStream``,
the requests in flight (one cancel scope each) and its own outgoing requests. Data flows:

    reader task: a whole read's messages --> core.receive --> request tasks
    request task --> handler --> core.send_result --> write (one batch per idle writer)

The reader is the session's own helper task and feeds the core directly instead of casting
each read to the actor's mailbox: that hop cost a scheduling round per request, a third of
the time of a lone stdio request (bench/RESULTS.md). The mailbox carries what comes from
outside the connection: notifications posted by other actors and the server, and timers.
Request, reader and actor tasks all run in one trio thread and touch the core only through
synchronous calls, so no state is shared across an ``await``. Replies ready together leave
in one write.

What a session deliberately is not: it does not decide what methods mean (``RequestHandler``
does), it does not frame bytes (the ``MessageStream`` does), and it does not outlive its
stream: end of input, a broken transport or an initialization timeout end it normally.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

import trio

from trimcp.actors import NORMAL, Actor, ExitReason
from trimcp.errors import (
    ActorGone,
    JsonRpcError,
    LocalProtocolError,
    MessageTooLarge,
    TransportBroken,
    TransportClosed,
)
from trimcp.protocol import (
    Cancelled,
    ErrorCode,
    ErrorObject,
    Initialized,
    InitializeReceived,
    NotificationReceived,
    Phase,
    ProgressParams,
    ProgressReceived,
    ReplyToSend,
    RequestReceived,
    ResponseReceived,
    Result,
    ServerConnection,
    ServerOptions,
    UnexpectedResponse,
    error_object_for,
)

from ._context import LOG_LEVELS, RequestContext, SessionHandle
from ._handler import SessionOptions

if TYPE_CHECKING:
    from trimcp.protocol import Event, JsonObject, JsonValue, RequestId
    from trimcp.transports import MessageStream

    from ._handler import RequestHandler

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[ProgressParams], Awaitable[None]]

# What the core is told for a request the client cancelled; it is never sent.
_CANCELLED = ErrorObject(code=ErrorCode.INTERNAL_ERROR, message="cancelled by the client")

# Phases in which posted notifications wait for the client's ``initialized``.
_BEFORE_OPERATION = (Phase.AWAITING_INITIALIZE, Phase.NEGOTIATING, Phase.INITIALIZING)
_MAX_HELD = 32

# Most replies ready at one moment that go out in one write.
_WRITE_BATCH = 256


class RequestTimedOut(TransportClosed):
    """A server-to-client request got no answer in time; it was cancelled."""


# --- messages to the session ---------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True)
class _InitTimeout:
    pass


@final
@dataclass(frozen=True, slots=True)
class _DrainTimeout:
    pass


@final
@dataclass(frozen=True, slots=True)
class Notify:
    """Cast to a session to send the client a notification (from another actor)."""

    method: str
    params: JsonObject | None = None


@final
class _Outgoing:
    """One of our requests to the client, waiting for its answer."""

    __slots__ = ("done", "on_progress", "response", "restart")

    def __init__(self, on_progress: ProgressCallback | None) -> None:
        self.done = trio.Event()
        self.response: Result | ErrorObject | None = None
        self.on_progress = on_progress
        # Set by progress: the wait restarts its timeout (Lifecycle > Timeouts, MAY).
        self.restart = trio.Event()


class Session(Actor):
    """One client session (see the module docstring)."""

    mailbox_size = 64

    def __init__(
        self,
        stream: MessageStream,
        handler: RequestHandler,
        options: SessionOptions | None = None,
    ) -> None:
        self._stream = stream
        self._handler = handler
        self._options = options or SessionOptions()
        self.connection = ServerConnection(
            handler.server_info,
            handler.capabilities,
            ServerOptions(
                instructions=handler.instructions,
                max_message_size=self._options.max_message_size,
                legacy_aliases=self._options.legacy_aliases,
            ),
        )
        self.log_level: str | None = None
        self._requests: dict[RequestId, trio.CancelScope] = {}
        self._outgoing: dict[RequestId, _Outgoing] = {}
        # Encoded messages waiting for the stream; flushed by whichever task finds the
        # stream idle (see ``write``). ``_room`` wakes writers waiting for space.
        self._pending: list[bytes] = []
        self._flushing = False
        self._write_closed = False
        self._room = trio.Event()
        # Set whenever no task is flushing (terminate waits for it before closing).
        self._idle = trio.Event()
        self._idle.set()
        self._init_timer: trio.CancelScope | None = None
        self._held: list[Notify] = []
        # Set when input ended: stop once the requests in flight are answered.
        self._draining = False

    # --- lifecycle ----------------------------------------------------------------------

    async def init(self) -> None:
        """Start the reader and writer tasks and the initialization timer."""
        self.start_soon(self._read_loop)
        self._handler.session_opened(SessionHandle(self))
        if self._options.initialization_timeout != math.inf:
            self._init_timer = self.send_after(self._options.initialization_timeout, _InitTimeout())

    async def terminate(self, reason: ExitReason) -> None:
        """Finish writing what is queued, then close the core and the stream.

        Replies already encoded still go out (a request answered just before the stop
        queues its reply behind another task's write); the actor's stop deadline bounds
        that. In-flight requests are cancelled with the actor afterwards.
        """
        self._handler.session_closed(SessionHandle(self))
        self.connection.close()
        for waiter in self._outgoing.values():
            waiter.done.set()
        await self._finish_writes()
        self._write_closed = True
        self._room.set()
        await self._stream.aclose()

    async def _finish_writes(self) -> None:
        while self._flushing:
            await self._idle.wait()
        if self._pending and not self._write_closed:
            self._flushing = True
            try:
                await self._flush()
            finally:
                self._flushing = False

    # --- inbound ------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        stream = self._stream
        while True:
            batch: list[bytes | MessageTooLarge]
            try:
                batch = [await stream.receive_message()]
            except MessageTooLarge as exc:
                batch = [exc]
            except (TransportClosed, TransportBroken) as exc:
                logger.debug("session %s: input ended (%r)", self.name, exc)
                self._drain()
                return
            batch.extend(stream.receive_ready())
            await self._process(batch)

    async def handle_cast(self, message: object) -> None:
        """Send a notification cast by another actor (``Notify``)."""
        if isinstance(message, Notify):
            await self._send_notify(message)
        else:
            await super().handle_cast(message)

    async def _process(self, batch: list[bytes | MessageTooLarge]) -> None:
        """Feed one read's worth of messages to the core and act on its events, in order."""
        for item in batch:
            if isinstance(item, MessageTooLarge):
                await self._refuse_oversized(item)
                continue
            for event in self.connection.receive(item):
                await self._on_event(event)

    def _drain(self) -> None:
        """Input ended: finish the requests in flight, then stop (bounded by drain_timeout).

        A stdio client closes stdin to end the session (Lifecycle > Shutdown) and may do so
        right after its last request; those requests are still answered.
        """
        self._draining = True
        if not self._requests:
            self.stop(NORMAL)
        elif self._options.drain_timeout != math.inf:
            self.send_after(self._options.drain_timeout, _DrainTimeout())

    async def _send_notify(self, message: Notify) -> None:
        if self.connection.phase in _BEFORE_OPERATION:
            # Posted notifications travel in the system lane and may overtake the client's
            # own ``initialized``: hold them until it arrives (few, duplicates dropped).
            if message not in self._held and len(self._held) < _MAX_HELD:
                self._held.append(message)
            return
        try:
            data = self.connection.send_notification(message.method, message.params)
        except LocalProtocolError as exc:
            # Not initialized yet, closing, or a capability this session did not get: a
            # broadcast skips such sessions rather than failing them.
            logger.debug("session %s: %s not sent: %s", self.name, message.method, exc)
            return
        await self.write(data)

    def post_notification(self, method: str, params: JsonObject | None) -> bool:
        """Queue ``Notify`` in this session's system lane (never waits); see SessionHandle."""
        try:
            self.ref.send_info(Notify(method, params))
        except ActorGone:
            return False
        return True

    async def _refuse_oversized(self, error: MessageTooLarge) -> None:
        refusal = ErrorObject(
            code=ErrorCode.INVALID_REQUEST,
            message=str(error),
            data={"size": error.size, "limit": error.limit},
        )
        await self.write(self.connection.send_error(None, refusal))

    async def handle_info(self, message: object) -> None:
        """Send posted notifications; close the session if the handshake did not finish."""
        if isinstance(message, Notify):
            await self._send_notify(message)
            return
        if isinstance(message, _DrainTimeout):
            logger.info(
                "session %s: %d request(s) still running %g s after input ended; stopping",
                self.name,
                len(self._requests),
                self._options.drain_timeout,
            )
            self.stop(NORMAL)
            return
        if isinstance(message, _InitTimeout):
            if self.connection.phase is not Phase.OPERATING:
                logger.info(
                    "session %s: no initialized notification within %g s; closing",
                    self.name,
                    self._options.initialization_timeout,
                )
                self.connection.initialization_timed_out()
                self.stop(NORMAL)
            return
        await super().handle_info(message)

    async def _on_event(self, event: Event) -> None:
        if isinstance(event, RequestReceived):
            scope = trio.CancelScope()
            self._requests[event.request.id] = scope
            self.start_soon(self._run_request, event, scope)
        elif isinstance(event, ReplyToSend):
            await self.write(event.data)
        elif isinstance(event, InitializeReceived):
            await self.write(self.connection.respond_to_initialize())
        elif isinstance(event, Initialized):
            if self._init_timer is not None:
                self._init_timer.cancel()
            held, self._held = self._held, []
            for message in held:
                await self._send_notify(message)
        elif isinstance(event, Cancelled):
            running = self._requests.get(event.request_id)
            if running is not None:
                running.cancel()
        elif isinstance(event, NotificationReceived):
            self.start_soon(self._run_notification, event)
        else:
            await self._on_reply_event(event)

    async def _on_reply_event(self, event: Event) -> None:
        if isinstance(event, ResponseReceived):
            waiter = self._outgoing.pop(event.response.id, None)  # type: ignore[arg-type]
            if waiter is not None:
                response = event.response
                waiter.response = response if isinstance(response, Result) else response.error
                waiter.done.set()
        elif isinstance(event, ProgressReceived):
            waiter = self._outgoing.get(event.request_id)
            if waiter is not None:
                waiter.restart.set()
                if waiter.on_progress is not None:
                    self.start_soon(waiter.on_progress, event.params)
        elif isinstance(event, UnexpectedResponse):
            logger.debug("session %s: response to no pending request: %r", self.name, event)

    # --- running requests ---------------------------------------------------------------

    async def _run_request(self, event: RequestReceived, scope: trio.CancelScope) -> None:
        request = event.request
        context = RequestContext(self, request.id, event.progress_token)
        data = b""
        with scope:
            try:
                result = await self._handler.handle_request(request, context)
            except JsonRpcError as exc:
                data = self.connection.send_error(request.id, error_object_for(exc))
            except Exception as exc:
                logger.error(
                    "session %s: handler for %s (id %r) failed",
                    self.name,
                    request.method,
                    request.id,
                    exc_info=exc,
                    extra={"session": self.name, "method": request.method},
                )
                data = self.connection.send_error(request.id, error_object_for(exc))
            else:
                data = self._encode_result(request.id, request.method, result)
        del self._requests[request.id]
        if scope.cancelled_caught:
            self._release_cancelled(request.id)
        else:
            await self.write(data)
        if self._draining and not self._requests:
            self.stop(NORMAL)

    def _release_cancelled(self, request_id: RequestId) -> None:
        """Tell the core a cancelled request is over; it writes nothing for it.

        Cancelled by the client: the core still tracks the id until it is "answered" (and
        encodes nothing). Cancelled because the session is stopping: nobody is left to answer.
        """
        if self.connection.is_cancelled(request_id):
            with contextlib.suppress(LocalProtocolError):
                self.connection.send_error(request_id, _CANCELLED)

    def _encode_result(self, request_id: RequestId, method: str, result: JsonObject) -> bytes:
        try:
            return self.connection.send_result(request_id, result)
        except LocalProtocolError as exc:
            logger.error("session %s: result of %s could not be sent: %s", self.name, method, exc)
            return self.connection.send_error(request_id, error_object_for(exc))

    async def _run_notification(self, event: NotificationReceived) -> None:
        try:
            await self._handler.handle_notification(event.notification, SessionHandle(self))
        except Exception as exc:
            logger.error(
                "session %s: handler for %s failed",
                self.name,
                event.notification.method,
                exc_info=exc,
            )

    # --- outbound -----------------------------------------------------------------------

    async def write(self, data: bytes) -> bool:
        """Send one encoded message; return False if it was dropped (the session is closing).

        ``b""`` (nothing to send, e.g. the reply to a cancelled request) is skipped.

        There is no writer task: if the stream is idle, the caller writes, taking along
        whatever others queued meanwhile; if another task is writing, the message is queued
        for it and the caller returns at once (waiting only while ``write_queue`` messages are
        already queued). Replies that are ready together leave in one write, and a reply to a
        lone request costs no extra task switch. The write is shielded: cancelling the task
        that happens to be flushing must not cut a message in half; closing the stream (the
        session's ``terminate``) ends a write that is stuck.
        """
        if not data:
            return True
        while len(self._pending) >= self._options.write_queue and not self._write_closed:
            self._room = trio.Event() if self._room.is_set() else self._room
            await self._room.wait()
        if self._write_closed:
            logger.debug("session %s is closing; dropped %d bytes", self.name, len(data))
            return False
        self._pending.append(data)
        if not self._flushing:
            self._flushing = True
            self._idle = trio.Event()
            try:
                with trio.CancelScope(shield=True):
                    await self._flush()
            finally:
                self._flushing = False
                self._idle.set()
        return True

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending[:_WRITE_BATCH], self._pending[_WRITE_BATCH:]
            self._room.set()
            try:
                await self._stream.send_messages(batch)
            except (TransportClosed, TransportBroken) as exc:
                logger.debug("session %s: output ended (%r)", self.name, exc)
                self._write_closed = True
                self._pending.clear()
                self._room.set()
                self.stop(NORMAL)
                return

    async def send_log(self, level: str, data: JsonValue, logger_name: str | None) -> bool:
        """Send ``notifications/message`` unless ``level`` is below the client's filter."""
        threshold = self.log_level
        if threshold is not None and LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
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
        """Send a request to the client and wait for its result (see ``SessionHandle``)."""
        request_id, data = self.connection.send_request(method, params)
        waiter = _Outgoing(on_progress)
        self._outgoing[request_id] = waiter
        budget = self._options.request_timeout if timeout is None else timeout
        answered = False
        try:
            await self.write(data)
            while not waiter.done.is_set():
                waiter.restart = trio.Event()
                with trio.move_on_after(budget):
                    await _first_of(waiter.done, waiter.restart)
                if not (waiter.done.is_set() or waiter.restart.is_set()):
                    raise RequestTimedOut(f"{method} got no answer within {budget:g} s")
            answered = True
        finally:
            # Timed out, cancelled or failed: tell the client to stop (Utilities > Cancellation).
            if not answered and self._outgoing.pop(request_id, None) is not None:
                await self._cancel_outgoing(request_id)
        return _unwrap(method, waiter.response)

    async def _cancel_outgoing(self, request_id: RequestId) -> None:
        try:
            data = self.connection.send_cancel(request_id, "timed out or abandoned")
        except LocalProtocolError:
            return
        with trio.CancelScope(shield=True), trio.move_on_after(1.0):
            await self.write(data)


async def _first_of(done: trio.Event, restart: trio.Event) -> None:
    async with trio.open_nursery() as nursery:

        async def wait(event: trio.Event) -> None:
            await event.wait()
            nursery.cancel_scope.cancel()

        nursery.start_soon(wait, done)
        nursery.start_soon(wait, restart)


def _unwrap(method: str, response: Result | ErrorObject | None) -> JsonObject:
    if response is None:
        raise TransportClosed(f"the session ended before the client answered {method}")
    if isinstance(response, Result):
        return response.result
    data = None if not isinstance(response.data, dict | list | str | int | float) else response.data
    raise JsonRpcError(response.code, response.message, data)
