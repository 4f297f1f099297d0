"""The ``Session`` actor: one MCP client connection, from handshake to close.

A session owns a ``ServerConnection`` (the sans-IO core), the transport's ``MessageStream``,
the requests in flight (one cancel scope each) and its own outgoing requests. Data flows:

    reader task: a whole read's messages --> core.receive --> handler, run inline
    reply --> core.send_result --> queued; the whole read's replies leave in one write

The reader is the session's own helper task and feeds the core directly instead of casting
each read to the actor's mailbox: that hop cost a scheduling round per request, a third of
the time of a lone stdio request (bench/RESULTS.md). The mailbox carries what comes from
outside the connection: notifications posted by other actors and the server, and timers.

Requests run in the reader task itself, since most handlers answer without ever waiting:
a task spawn and a cancel scope per request were another third. A handler that does wait
keeps running concurrently all the same: just before it first suspends, a fresh reader task
takes over the reading, and the task it suspended in becomes that request's own task, whose
cancel scope the client's ``notifications/cancelled`` cancels (``_read_loop``).

Request, reader and actor tasks all run in one trio thread and touch the core only through
synchronous calls, so no state is shared across an ``await``.

What a session deliberately is not: it does not decide what methods mean (``RequestHandler``
does), it does not frame bytes (the ``MessageStream`` does), and it does not outlive its
stream: end of input, a broken transport or an initialization timeout end it normally.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import types
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Generator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, final

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

T = TypeVar("T")

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
class _Reading:
    """The reading role, held by one task at a time (see ``Session._read_loop``)."""

    __slots__ = ("request", "scope")

    def __init__(self) -> None:
        # Encloses the task's whole reading; once the task adopts a request, the request's.
        self.scope = trio.CancelScope()
        # The request this task adopted when its handler first suspended; then it reads no
        # more. RequestId is str | int, never None.
        self.request: RequestId | None = None


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
        # Requests running in a task of their own (handlers that waited), for cancellation
        # and draining; a request answered inline by the reader is never listed.
        self._requests: dict[RequestId, trio.CancelScope] = {}
        self._outgoing: dict[RequestId, _Outgoing] = {}
        # Read but not yet acted on, in order: messages not yet fed to the core, and events
        # the core returned. Shared so a new reader carries on where the last one stopped.
        self._inbox: deque[bytes | MessageTooLarge] = deque()
        self._events: deque[Event] = deque()
        # Encoded messages waiting for the stream; flushed by whichever task finds the
        # stream idle (see ``write``), or at the end of the reader's batch for what the
        # reader queued. ``_room`` wakes writers waiting for space.
        self._pending: list[bytes] = []
        # A stream that can write without waiting (``StdioStream.send_messages_now``: write
        # what the output takes now, keep the rest for the next ``send_messages``) saves
        # a shielded flush per write; ``MessageStream`` does not require it.
        self._send_now: Callable[[Sequence[bytes]], bool] | None = getattr(
            stream, "send_messages_now", None
        )
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
        """Start the reader task and the initialization timer."""
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
            await self._flush_pending()

    # --- inbound ------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        """Read and act on messages until input ends or this task adopts a request.

        Requests run inline, in this task (``_run_request``). When a handler is about to
        suspend for the first time, ``_hand_over`` starts a new reader task, which carries
        on with the rest of the batch and the reading, and this task stays with the
        request: from then on ``role.scope`` is that request's cancel scope. Replies the
        reader produced are queued and leave together at the end of its batch.
        """
        role = _Reading()
        stream, inbox = self._stream, self._inbox
        with role.scope:
            while not await self._process_backlog(role):
                if self._pending and not self._flushing:
                    self._flush_soon()
                try:
                    inbox.append(await stream.receive_message())
                except MessageTooLarge as exc:
                    inbox.append(exc)
                except (TransportClosed, TransportBroken) as exc:
                    logger.debug("session %s: input ended (%r)", self.name, exc)
                    self._drain()
                    break
                inbox.extend(stream.receive_ready())
        if role.request is not None and role.scope.cancelled_caught:
            self._release_cancelled(role.request)

    async def handle_cast(self, message: object) -> None:
        """Send a notification cast by another actor (``Notify``)."""
        if isinstance(message, Notify):
            await self._send_notify(message)
        else:
            await super().handle_cast(message)

    async def _process_backlog(self, role: _Reading) -> bool:
        """Feed what was read to the core and act on its events, in order.

        Returns True if this task adopted a request on the way (it must stop reading).
        """
        events, inbox = self._events, self._inbox
        while True:
            if events:
                event = events.popleft()
                if type(event) is not RequestReceived:
                    await self._on_event(event)
                    continue
                await self._run_request(event, role)
                if role.request is not None:
                    return True
            elif inbox:
                item = inbox.popleft()
                if isinstance(item, MessageTooLarge):
                    await self._refuse_oversized(item)
                else:
                    events.extend(self.connection.receive(item))
            else:
                return False

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
        await self._write_later(self.connection.send_error(None, refusal))

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
        """Act on an event other than a request (``_run_request`` runs those)."""
        if isinstance(event, ReplyToSend):
            await self._write_later(event.data)
        elif isinstance(event, InitializeReceived):
            await self._write_later(self.connection.respond_to_initialize())
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

    async def _run_request(self, event: RequestReceived, role: _Reading) -> None:
        """Run the handler in the reader's task; answer inline or as the adopted request.

        The client's cancellation of an adopted request ends this by ``Cancelled``, which
        ``role.scope`` catches in ``_read_loop``.
        """
        request = event.request
        context = RequestContext(self, request.id, event.progress_token)
        coro = self._handler.handle_request(request, context)
        try:
            # A copy of the context, as a task of its own would get: a handler's context
            # variables must not leak into the reader and the requests after it.
            result = await _run_inline(
                coro, contextvars.copy_context(), self._hand_over, role, request.id
            )
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
        if role.request is None:  # answered inline
            if data and len(self._pending) < self._options.write_queue and not self._write_closed:
                self._pending.append(data)  # _write_later's common case, without the call
            else:
                await self._write_later(data, request=True)
            return
        del self._requests[request.id]
        await self.write(data)
        if self._draining and not self._requests:
            self.stop(NORMAL)

    def _hand_over(self, role: _Reading, request_id: RequestId) -> None:
        """Let a new task read: this one is about to suspend in the handler it runs.

        Called synchronously just before the handler's first suspension, so nothing else
        runs in between; the request becomes cancellable through ``role.scope``.
        """
        role.request = request_id
        self._requests[request_id] = role.scope
        self.start_soon(self._read_loop)

    def _release_cancelled(self, request_id: RequestId) -> None:
        """Forget an adopted request the client cancelled; nothing is written for it.

        The core still tracks the id until it is "answered" (and encodes nothing). A request
        cancelled because the session is stopping never gets here: nobody is left to answer.
        """
        self._requests.pop(request_id, None)
        if self.connection.is_cancelled(request_id):
            with contextlib.suppress(LocalProtocolError):
                self.connection.send_error(request_id, _CANCELLED)
        if self._draining and not self._requests:
            self.stop(NORMAL)

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
        already queued). Replies that are ready together leave in one write. A stream with
        ``send_messages_now`` is written without waiting when it takes everything, so this
        is not always a schedule point. A write that must wait is shielded: cancelling the
        task that happens to be flushing must not cut a message in half; closing the stream
        (the session's ``terminate``) ends a write that is stuck.
        """
        if not data:
            return True
        while len(self._pending) >= self._options.write_queue and not self._write_closed:
            if self._flushing:
                self._room = trio.Event() if self._room.is_set() else self._room
                await self._room.wait()
            else:  # the reader queued these and has not flushed yet
                await self._flush_pending()
        if self._write_closed:
            logger.debug("session %s is closing; dropped %d bytes", self.name, len(data))
            return False
        self._pending.append(data)
        if not self._flushing:
            await self._flush_pending()
        return True

    async def _write_later(self, data: bytes, *, request: bool = False) -> None:
        """Queue a message from the reader's batch; ``_flush_soon`` sends it with the rest.

        With the queue full, a reply (``request``) is handed to a task of its own, as if
        its request had run in one, so the reader keeps reading; anything else waits here.
        """
        if not data:
            return
        if len(self._pending) < self._options.write_queue and not self._write_closed:
            self._pending.append(data)
        elif request:
            self.start_soon(self.write, data)
        else:
            await self.write(data)

    def _flush_soon(self) -> None:
        """Write what is queued now, or start a task to: the reader never waits to write.

        The caller found something queued and no flush running.
        """
        if not self._write_now():
            self._flushing = True
            self._idle = trio.Event()
            self.start_soon(self._flush_started)

    def _write_now(self) -> bool:
        """Write what is queued without waiting; return False if some of it must wait.

        What the stream could not take stays with it (``send_messages_now``) and goes
        first in the next ``_flush``. Also True when the output has ended.
        """
        if self._send_now is None:
            return False
        try:
            done = self._send_now(self._take_batch())
        except (TransportClosed, TransportBroken) as exc:
            self._output_ended(exc)
            return True
        return done and not self._pending

    async def _flush_pending(self) -> None:
        """Write what is queued, in this task; no other task may be flushing."""
        if self._write_now():
            return
        self._flushing = True
        self._idle = trio.Event()
        await self._flush_started()

    async def _flush_started(self) -> None:
        """Finish the flush begun by setting ``_flushing``; shielded (see ``write``)."""
        try:
            with trio.CancelScope(shield=True):
                await self._flush()
        finally:
            self._flushing = False
            self._idle.set()

    def _take_batch(self) -> list[bytes]:
        """Take the next batch off the queue, waking writers if it was full."""
        pending = self._pending
        if len(pending) >= self._options.write_queue:
            self._room.set()  # writers wait only for a full queue (see ``write``)
        if len(pending) <= _WRITE_BATCH:
            self._pending = []
            return pending
        self._pending = pending[_WRITE_BATCH:]
        return pending[:_WRITE_BATCH]

    async def _flush(self) -> None:
        timeout = self._options.write_timeout
        while True:
            try:
                # Bounded even though the flush is shielded: a peer that stops reading
                # must not keep the session (and its supervisor's shutdown) waiting forever.
                with trio.move_on_after(timeout) as stuck:
                    # An empty batch still sends what ``send_messages_now`` kept back.
                    await self._stream.send_messages(self._take_batch())
                if stuck.cancelled_caught:
                    logger.warning(
                        "session %s: the client took nothing for %g s; closing the session",
                        self.name,
                        timeout,
                    )
                    raise TransportBroken(f"the client read nothing for {timeout:g} s")
            except (TransportClosed, TransportBroken) as exc:
                self._output_ended(exc)
                return
            if not self._pending:
                return

    def _output_ended(self, exc: TransportClosed | TransportBroken) -> None:
        logger.debug("session %s: output ended (%r)", self.name, exc)
        self._write_closed = True
        self._pending.clear()
        self._room.set()
        self.stop(NORMAL)

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


@types.coroutine
def _run_inline(
    coro: Coroutine[Any, Any, T],
    context: contextvars.Context,
    on_suspend: Callable[[_Reading, RequestId], None],
    role: _Reading,
    request_id: RequestId,
) -> Generator[Any, Any, T]:
    """Run ``coro`` in the awaiting task, in ``context``, as ``await`` would.

    Just before ``coro`` first yields to trio (it is about to suspend), call
    ``on_suspend(role, request_id)``; a coroutine that finishes without suspending never
    calls it. After that, trio's resumptions pass straight through: trio resumes a task
    with ``send`` (an outcome), and throws in only after a foreign yield.
    """
    resume: Callable[[Any], Any] = coro.send
    value: Any = None
    suspended = False
    while True:
        try:
            message = context.run(resume, value)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]  # the coroutine's own T
        if not suspended:
            suspended = True
            on_suspend(role, request_id)
        try:
            value = yield message
        except Exception as exc:  # noqa: BLE001  (not handled: thrown into the coroutine)
            resume, value = coro.throw, exc
        else:
            resume = coro.send
