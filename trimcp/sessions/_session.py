"""The ``Session`` actor: one MCP client connection, from handshake to close.

A session owns a ``ServerConnection`` (the sans-IO core), the transport's ``MessageStream``,
the requests in flight (one cancel scope each) and its own outgoing requests. Data flows:

    reader task: a whole read's messages --> core.receive --> handler, run inline
    reply --> core.send_result --> queued; the whole read's replies leave in one write

The reader is the session's own helper task and feeds the core directly instead of casting
each read to the actor's mailbox: that hop cost a scheduling round per request, a third of
the time of a lone stdio request (bench/RESULTS.md). The mailbox carries what comes from
outside the connection: notifications posted by other actors and the server, and timers.

A stream that *pushes* its input (``PushedInput``: Streamable HTTP, whose input is one POST
body at a time) hands each body to ``push_input``, and a reader task runs only while there is
input to act on. An idle HTTP session then has no reader parked on an empty channel: of the
tasks it could have, only the actor's own remains. Other streams (stdio, WebSocket) are read
by a reader that waits for input (``_read_loop``). Which of these holds, and whether the
input has ended, is one state of the input table (``_input.py``), not a set of flags.

Requests run in the reader task itself, since most handlers answer without ever waiting:
a task spawn and a cancel scope per request were another third. A handler that does wait
keeps running concurrently all the same: just before it first suspends, a fresh reader task
takes over the reading, and the task it suspended in becomes that request's own task, whose
cancel scope the client's ``notifications/cancelled`` cancels (``_read_loop``).

Output goes through the session's ``SessionWriter`` (``_writer.py``), each message tagged with
the client request it belongs to: a reply with its request, a handler's progress with the
request it reports on. A transport that routes per request (HTTP) uses the tags; a handler's
progress then mostly leaves without a schedule point.

Request, reader and actor tasks all run in one trio thread and touch the core only through
synchronous calls, so no state is shared across an ``await``.

A graceful stop drains the session (``trimcp.supervision.Drain``, ``_shutdown.py``): it joins
the application's drain when it starts, enters the ``DRAINING`` phase when the drain begins
and from then on answers every new request with the -32000 "shutting down" error, while the
requests in flight run on; the drain waits for them (``in_flight``). Those still running when
its time is up are cancelled and each answered with that error (``abort_in_flight``), as are
those running when the session stops for any reason: a request is never left unanswered.

What a session deliberately is not: it does not decide what methods mean (``RequestHandler``
does), it does not frame bytes (the ``MessageStream`` does), and it does not outlive its
stream: end of input, a broken transport or an initialization timeout end it normally.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, final, runtime_checkable

import trio

from trimcp.actors import NORMAL, Actor, ExitReason
from trimcp.errors import (
    ActorGone,
    JsonRpcError,
    LocalProtocolError,
    MessageTooLarge,
    RequestTimeout,
    TransportBroken,
    TransportClosed,
)
from trimcp.protocol import (
    CancelReceived,
    ErrorCode,
    ErrorObject,
    Initialized,
    InitializeReceived,
    NotificationReceived,
    Phase,
    ProgressReceived,
    ReplyToSend,
    RequestReceived,
    ResponseReceived,
    Result,
    ServerConnection,
    UnexpectedResponse,
    error_object_for,
)
from trimcp.supervision import DRAIN, DRAINABLE_PHASES, DRAINING, current_drain
from trimcp.telemetry import SLOT, Peer, finish_raised, result_outcome
from trimcp.transports import (
    AsgiWebSocketStream,
    PendingAnswer,
    PushedInput,
    RequestStreamControl,
    StdioStream,
    WebSocketStream,
    WrappingStream,
)

from ._context import LOG_LEVELS, RequestContext, SessionHandle, identity_of
from ._inline import run_inline
from ._input import INPUT_OVER, InputEvent, InputState, InputStep, next_input
from ._modern_lane import ModernLane
from ._options import SessionOptions, server_options
from ._outgoing import unwrap
from ._shutdown import shutting_down
from ._writer import SessionWriter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.auth import Identity
    from trimcp.protocol import Event, JsonObject, JsonValue, Request, RequestId, RequestMeta
    from trimcp.supervision import Drain
    from trimcp.telemetry import RequestProbe, SessionProbe, Transport
    from trimcp.transports import MessageStream, Routed

    from ._handler import RequestHandler
    from ._outgoing import Waiter
    from ._port import ProgressCallback

__all__ = ["InitializationDue", "Notify", "Session"]

logger = logging.getLogger(__name__)

# What the core is told for a request the client cancelled; it is never sent.
_CANCELLED = ErrorObject(code=ErrorCode.INTERNAL_ERROR, message="cancelled by the client")

# Phases in which posted notifications wait for the client's ``initialized``.
_BEFORE_OPERATION = (Phase.AWAITING_INITIALIZE, Phase.NEGOTIATING, Phase.INITIALIZING)
_MAX_HELD = 32

# Pushed bodies waiting for the reader before ``push_input`` waits: a client that floods a
# busy session with notifications (each answered 202 at once) is held back here.
_MAX_PUSHED = 16


# --- messages to the session ---------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True)
class InitializationDue:
    """The handshake's time is up (``initialization_timeout``): close unless initialized.

    The session's own timer sends it, or its manager, which times its sessions' handshakes.
    """


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


def transport_of(stream: MessageStream) -> Transport | None:
    """Name the transport ``stream`` moves messages over (telemetry's ``network.transport``).

    None for a stream of unknown kind (an in-memory pair, a test's wrapper). A stream that
    passes another's messages on (``WrappingStream``) is named after the one underneath.
    """
    while isinstance(stream, WrappingStream):
        stream = stream.wrapped
    if isinstance(stream, StdioStream):
        return "stdio"
    if isinstance(stream, WebSocketStream | AsgiWebSocketStream):
        return "websocket"
    if isinstance(stream, PushedInput):  # Streamable HTTP: one POST body at a time
        return "http"
    return None


@runtime_checkable
class _WireSessionId(Protocol):
    """A stream that knows its session's id on the wire (Streamable HTTP's Mcp-Session-Id)."""

    session_id: str


def _wire_session_id(stream: MessageStream) -> str | None:
    session_id = stream.session_id if isinstance(stream, _WireSessionId) else None
    return session_id if isinstance(session_id, str) else None


class Session(Actor):
    """One client session (see the module docstring)."""

    mailbox_size = 64
    #: What a per-request (2026-07-28) request said in ``_meta``; sessions have none.
    meta: RequestMeta | None = None
    #: Where the client is, as telemetry reports it (set in ``init``, once the name is known).
    peer: Peer = Peer()
    phase_table = DRAINABLE_PHASES

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
            server_options(
                handler.instructions,
                self._options.max_message_size,
                self._options.legacy_aliases,
            ),
        )
        self.log_level: str | None = None
        # Requests running in a task of their own (handlers that waited), for cancellation
        # and draining (a request answered inline by the reader is never listed), and our
        # requests to the client awaiting answers. Both made on first use.
        self._requests: dict[RequestId, trio.CancelScope] | None = None
        self._outgoing: dict[RequestId, Waiter] | None = None
        # Read but not yet acted on, in order: messages not yet fed to the core, and events
        # the core returned. Shared so a new reader carries on where the last one stopped;
        # None while empty, as an empty deque costs ~760 bytes per idle session.
        self._inbox: deque[bytes | MessageTooLarge] | None = None
        self._events: deque[Event] | None = None
        self._writer = SessionWriter(stream, self._options, self)
        self._init_timer: trio.CancelScope | None = None
        self._held: list[Notify] | None = None
        # Where the input stands (``_input.py``): read or pushed, a reader running or not,
        # ended or not. Only ``_input_event`` changes it.
        self._input = InputState.IDLE if isinstance(stream, PushedInput) else InputState.PULLED
        # The event ``push_input`` waits on when ``_MAX_PUSHED`` bodies are waiting (made by
        # that waiter only).
        self._inbox_room: trio.Event | None = None
        # The application's drain this session takes part in (set in ``init``), if any.
        self._app_drain: Drain | None = None
        # 2026-07-28 requests on a stream the session reads (stdio, WebSocket): served
        # beside the handshake (``_modern_lane.py``). HTTP serves those without a session.
        self._lane: ModernLane | None = None
        if not isinstance(stream, PushedInput):
            self._lane = ModernLane(handler, self._options, self)
        # Sees the session from ``init`` to ``terminate`` when telemetry is on.
        self._observed: SessionProbe | None = None

    # --- lifecycle ----------------------------------------------------------------------

    async def init(self) -> None:
        """Start reading (or take pushed input) and the initialization timer."""
        stream = self._stream
        self.peer = Peer(transport_of(stream), _wire_session_id(stream) or self.name)
        observer = SLOT.observer if self._options.observed else None
        if observer is not None:
            self._observed = observer.server_session(self.peer)
        if isinstance(stream, PushedInput):
            stream.attach_input(self)
        else:
            self.start_soon(self._read_loop)
        self._handler.session_opened(SessionHandle(self))
        drain = current_drain()
        if drain is not None:
            self._app_drain = drain
            drain.add(self)
        timeout = self._options.initialization_timeout
        if timeout != math.inf:
            self._init_timer = self.send_after(timeout, InitializationDue())

    async def terminate(self, reason: ExitReason) -> None:
        """Finish writing what is queued, then close the core and the stream.

        Replies already encoded still go out (a request answered just before the stop
        queues its reply behind another task's write); the actor's stop deadline bounds
        that. In-flight requests are cancelled here and each answered with an error (nobody
        may be left waiting for an answer that cannot come); their tasks end with the actor.
        """
        self._handler.session_closed(SessionHandle(self))
        if self._observed is not None:
            failed = None if reason.kind in ("normal", "shutdown") else reason.kind
            self._observed.end(self.connection.negotiated_version, failed)
        if self._lane is not None:
            self._lane.cancel_all()
        if self._app_drain is not None:
            self._app_drain.discard(self)
        if self._requests:
            draining = self._app_drain is not None and self._app_drain.draining
            self.abort_in_flight(
                "the server is shutting down: the request was cancelled"
                if draining
                else "the session closed before the request finished"
            )
        self.connection.close()
        for waiter in (self._outgoing or {}).values():
            waiter.answer(None)
        await self._writer.close()
        await self._stream.aclose()

    # --- the graceful stop (trimcp.supervision.Drainable) --------------------------------

    @property
    def in_flight(self) -> int:
        """Requests running in a task of their own (an inline one never waits)."""
        modern = 0 if self._lane is None else self._lane.in_flight
        return (len(self._requests) if self._requests else 0) + modern

    def begin_drain(self) -> None:
        """Take no new requests (each is answered -32000); let those in flight finish."""
        if not self.stopping and self.phase is not DRAINING:
            self.transition(DRAIN)

    def abort_in_flight(self, reason: str) -> None:
        """Cancel every request in flight and answer each with the -32000 error, ``reason``.

        The answers are queued at once (the writer sends them); the cancelled tasks find
        their request gone and write nothing more (``_run_request``).
        """
        requests, self._requests = self._requests, None
        if not requests:
            return
        error = shutting_down(reason)
        for request_id, scope in requests.items():
            scope.cancel()
            try:
                data = self.connection.send_error(request_id, error)
            except LocalProtocolError:
                continue  # answered or closed meanwhile
            self._writer.write_soon((data, request_id, True))
        if self._app_drain is not None:
            self._app_drain.changed()
        if self._input is InputState.DRAINING and not self.stopping:
            self.stop(NORMAL)

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
        stream = self._stream
        with role.scope:
            while not await self._process_backlog(role):
                self._writer.flush_soon()
                received: list[bytes | MessageTooLarge]
                try:
                    received = [await stream.receive_message()]
                except MessageTooLarge as exc:
                    received = [exc]
                except (TransportClosed, TransportBroken) as exc:
                    logger.debug("session %s: input ended (%r)", self.name, exc)
                    if self._input_event(InputEvent.ENDED) is InputStep.DRAIN:
                        self._drain()
                    break
                self._take_input(received)
                self._take_input(stream.receive_ready())
        if role.request is not None and role.scope.cancelled_caught:
            self._release_cancelled(role.request)

    def _input_event(self, event: InputEvent) -> InputStep:
        """Move the input to its next state (``_input.py``); return what to do about it."""
        self._input, step = next_input(self._input, event)
        return step

    def _take_input(self, items: Sequence[bytes | MessageTooLarge]) -> None:
        if items:
            if self._inbox is None:
                self._inbox = deque(items)
            else:
                self._inbox.extend(items)

    async def push_input(self, body: bytes) -> None:
        """Take one message from a stream that pushes its input (see the module docstring).

        A reader task acts on it, started now unless one is running. Waits only while
        ``_MAX_PUSHED`` messages are already waiting for the reader.

        Raises:
            TransportClosed: the input has ended, or the session is stopping.
        """
        while (
            self._inbox is not None
            and len(self._inbox) >= _MAX_PUSHED
            and not (self._input in INPUT_OVER or self.stopping)
        ):
            if self._inbox_room is None:
                self._inbox_room = trio.Event()
            await self._inbox_room.wait()
        step = InputStep.REFUSE if self.stopping else self._input_event(InputEvent.PUSHED)
        if step is InputStep.REFUSE:
            raise TransportClosed(f"session {self.name} takes no more input")
        self._take_input((body,))
        if step is InputStep.START_READER:
            self.start_soon(self._serve_pushed)

    def input_ended(self) -> None:
        """No more input will be pushed (the stream closed): finish, then stop.

        Messages already pushed are still acted on; the requests in flight are answered
        within ``drain_timeout``.
        """
        step = self._input_event(InputEvent.ENDED)
        self._wake_pushers()
        if step is InputStep.DRAIN and not self.stopping:
            self._drain()

    def _wake_pushers(self) -> None:
        room, self._inbox_room = self._inbox_room, None
        if room is not None:
            room.set()

    async def _serve_pushed(self) -> None:
        """Act on the pushed input until there is none or this task adopts a request."""
        role = _Reading()
        with role.scope:
            if not await self._process_backlog(role):
                self._reader_done()
        if role.request is not None and role.scope.cancelled_caught:
            self._release_cancelled(role.request)

    def _reader_done(self) -> None:
        """No pushed input is left to act on: send the replies, maybe drain; stop reading."""
        step = self._input_event(InputEvent.READER_DONE)
        self._writer.flush_soon()
        if step is InputStep.DRAIN:
            self._drain()

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
        while True:
            events = self._events
            if events:
                event = events.popleft()
                if type(event) is not RequestReceived:
                    await self._on_event(event)
                    continue
                await self._run_request(event, role)
                if role.request is not None:
                    return True
            elif self._inbox:
                item = self._inbox.popleft()
                if self._inbox_room is not None and len(self._inbox) < _MAX_PUSHED:
                    self._wake_pushers()
                if isinstance(item, MessageTooLarge):
                    await self._refuse_oversized(item)
                elif self._lane is not None and self._lane.take(item):
                    continue
                else:
                    received = self.connection.receive(item)
                    if events is None:
                        self._events = deque(received)
                    else:
                        events.extend(received)
            else:
                # Nothing left: keep no empty deques (an idle session would hold them).
                self._inbox = self._events = None
                return False

    def _drain(self) -> None:
        """Input ended: finish the requests in flight, then stop (bounded by drain_timeout).

        A stdio client closes stdin to end the session (Lifecycle > Shutdown) and may do so
        right after its last request; those requests are still answered.
        """
        if self._lane is not None:
            self._lane.end_listeners()
        if not self.in_flight:
            self.stop(NORMAL)
        elif self._options.drain_timeout != math.inf:
            self.send_after(self._options.drain_timeout, _DrainTimeout())

    def modern_done(self) -> None:
        """A 2026-07-28 request finished: the drain may be over."""
        if self._app_drain is not None:
            self._app_drain.changed()
        if self._input is InputState.DRAINING and not self.in_flight and not self.stopping:
            self.stop(NORMAL)

    async def _send_notify(self, message: Notify) -> None:
        if self.connection.phase in _BEFORE_OPERATION:
            # Posted notifications travel in the system lane and may overtake the client's
            # own ``initialized``: hold them until it arrives (few, duplicates dropped).
            held = self._held if self._held is not None else []
            if message not in held and len(held) < _MAX_HELD:
                held.append(message)
                self._held = held
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
        await self._writer.write_later((self.connection.send_error(None, refusal), None, True))

    async def handle_info(self, message: object) -> None:
        """Send posted notifications; close the session if the handshake did not finish."""
        if isinstance(message, Notify):
            await self._send_notify(message)
            return
        if isinstance(message, _DrainTimeout):
            logger.info(
                "session %s: %d request(s) still running %g s after input ended; stopping",
                self.name,
                len(self._requests or ()),
                self._options.drain_timeout,
            )
            self.stop(NORMAL)
            return
        if isinstance(message, InitializationDue):
            if self._lane is not None and self._lane.served:
                # A 2026-07-28 client never initializes: its stream stays open.
                return
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
            await self._writer.write_later((event.data, event.request_id, True))
        elif isinstance(event, InitializeReceived):
            await self._initialize(event)
        elif isinstance(event, Initialized):
            if self._init_timer is not None:
                self._init_timer.cancel()
                self._init_timer = None
            held, self._held = self._held or [], None
            for message in held:
                await self._send_notify(message)
        elif isinstance(event, CancelReceived):
            running = self._requests.get(event.request_id) if self._requests else None
            if running is not None:
                running.cancel()
        elif isinstance(event, NotificationReceived):
            self.start_soon(self._run_notification, event)
        else:
            await self._on_reply_event(event)

    async def _initialize(self, event: InitializeReceived) -> None:
        observer = SLOT.observer if self._options.observed else None
        probe = None
        if observer is not None:
            probe = observer.server_request(
                "initialize", event.request_id, None, self.peer, None, None
            )
        reply = self.connection.respond_to_initialize()
        if probe is not None:
            probe.finish("ok")
        await self._writer.write_later((reply, event.request_id, True))

    async def _on_reply_event(self, event: Event) -> None:
        if isinstance(event, ResponseReceived):
            waiter = (
                self._outgoing.pop(event.response.id, None)  # type: ignore[arg-type]
                if self._outgoing
                else None
            )
            if waiter is not None:
                response = event.response
                waiter.answer(response if isinstance(response, Result) else response.error)
        elif isinstance(event, ProgressReceived):
            waiter = self._outgoing.get(event.request_id) if self._outgoing else None
            if waiter is not None:
                waiter.progress(event.params)
        elif isinstance(event, UnexpectedResponse):
            logger.debug("session %s: response to no pending request: %r", self.name, event)

    # --- running requests ---------------------------------------------------------------

    async def _run_request(  # noqa: C901, PLR0912  # the telemetry hooks inline: no call when off
        self, event: RequestReceived, role: _Reading
    ) -> None:
        """Run the handler in the reader's task; answer inline or as the adopted request.

        The client's cancellation of an adopted request ends this by ``Cancelled``, which
        ``role.scope`` catches in the reader.
        """
        request = event.request
        if self.phase is DRAINING:
            # The server is stopping (a graceful stop's drain): no new work.
            await self._answer_inline(
                self.connection.send_error(request.id, shutting_down()), request.id
            )
            return
        context = RequestContext(self, request.id, event.progress_token)
        coro = self._handler.handle_request(request, context)
        # A copy of the context, as a task of its own would get: a handler's context
        # variables must not leak into the reader and the requests after it.
        run_context = contextvars.copy_context()
        observer = SLOT.observer if self._options.observed else None
        probe: RequestProbe | None = None
        if observer is not None:
            # The request's span and log fields go in its handler's context (and so its own
            # requests', a gateway's forwarding included), not the reader's.
            probe = observer.server_request(
                request.method,
                request.id,
                request.params,
                self.peer,
                self.connection.negotiated_version,
                run_context,
            )
        failure: Exception | None = None
        try:
            result = await run_inline(coro, run_context, self._hand_over, role, request.id)
        except Exception as exc:  # noqa: BLE001  (answered below, as an error object)
            failure = exc
        except BaseException:  # cancelled: recorded, never swallowed
            if probe is not None:
                probe.finish("cancelled")
            raise
        requests = self._requests
        if role.request is not None and (requests is None or request.id not in requests):
            if probe is not None:
                probe.finish("cancelled")
            return  # answered already: cancelled by a stop (abort_in_flight)
        if failure is None:
            data = self._encode_result(request.id, request.method, result)
            if probe is not None:
                probe.finish(result_outcome(request.method, result))
        else:
            data = self._encode_failure(request, failure)
            if probe is not None:
                probe.finish("error", error_object_for(failure).code)
        if role.request is None:  # answered inline: leaves with the reader's batch
            await self._answer_inline(data, request.id)
            return
        reply: Routed = (data, request.id, True)
        assert requests is not None  # listed by _hand_over
        del requests[request.id]
        await self._writer.write(reply)
        if self._app_drain is not None:
            self._app_drain.changed()
        if self._input is InputState.DRAINING and not self.in_flight:
            self.stop(NORMAL)

    async def _answer_inline(self, data: bytes, request_id: RequestId) -> None:
        """Queue the reply to a request answered in the reader: it leaves with the batch."""
        reply: Routed = (data, request_id, True)
        if not self._writer.queue(reply):
            await self._writer.write_later(reply, request=True)

    def _encode_failure(self, request: Request, failure: Exception) -> bytes:
        if not isinstance(failure, JsonRpcError):
            logger.error(
                "session %s: handler for %s (id %r) failed",
                self.name,
                request.method,
                request.id,
                exc_info=failure,
                extra={"session": self.name, "method": request.method},
            )
        return self.connection.send_error(request.id, error_object_for(failure))

    def _hand_over(self, role: _Reading, request_id: RequestId) -> None:
        """Let a new task read: this one is about to suspend in the handler it runs.

        Called synchronously just before the handler's first suspension, so nothing else
        runs in between; the request becomes cancellable through ``role.scope``. A pushed
        session starts a new reader only if input is left to act on.
        """
        role.request = request_id
        if self._requests is None:
            self._requests = {}
        self._requests[request_id] = role.scope
        if self._input is InputState.PULLED:
            self.start_soon(self._read_loop)
        elif self._events or self._inbox:
            self.start_soon(self._serve_pushed)
        else:
            self._reader_done()

    def _release_cancelled(self, request_id: RequestId) -> None:
        """Forget an adopted request the client cancelled; no response is written for it.

        The core still tracks the id until it is "answered" (and encodes nothing); a routed
        stream is told that no response comes. A request cancelled because the session is
        stopping never gets here: nobody is left to answer.
        """
        if self._requests:
            self._requests.pop(request_id, None)
        if self._app_drain is not None:
            self._app_drain.changed()
        if self.connection.is_cancelled(request_id):
            with contextlib.suppress(LocalProtocolError):
                self.connection.send_error(request_id, _CANCELLED)
            self._writer.write_soon((b"", request_id, True))
        if self._input is InputState.DRAINING and not self.in_flight:
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

    # --- what the views ask (SessionPort) ------------------------------------------------

    @property
    def identity(self) -> Identity | None:
        """The identity the transport bound to this session (``bind_identity``), if any."""
        return identity_of(self.ref)

    @property
    def backlog(self) -> int:
        """Messages waiting in this session's mailbox."""
        return self.ref.queued

    # --- outbound -----------------------------------------------------------------------

    async def write(
        self, data: bytes, related: RequestId | None = None, *, final: bool = False
    ) -> bool:
        """Send one encoded message; return False if it was dropped (the session is closing).

        ``related`` is the client request the message belongs to (its progress, say), and
        ``final`` marks that request's response. ``b""`` (nothing to send, e.g. the reply
        to a cancelled request) is skipped. See ``SessionWriter.write`` for when this waits.
        """
        if self._writer.write_now(data, related, final):
            return True
        return await self._writer.write((data, related, final))

    def write_now(self, data: bytes, related: RequestId | None = None) -> bool:
        """Send one message if the stream takes it at once; False: ``write`` it instead.

        Never a schedule point; see ``SessionWriter.write_now``.
        """
        return self._writer.write_now(data, related, False)

    def output_ended(self) -> None:
        """The stream takes no more output: stop (see ``SessionWriter``)."""
        self.stop(NORMAL)

    def close_request_stream(self, request_id: RequestId) -> bool:
        """Close the connection ``request_id``'s answer streams on, keeping the stream.

        False unless the stream delivers each request's answer on a connection of its own
        (``RequestStreamControl``: Streamable HTTP) and that connection is open.
        """
        stream = self._stream
        return isinstance(stream, RequestStreamControl) and stream.close_request_stream(request_id)

    def abandon(self) -> None:
        """Give up on a client that does not keep up (see ``SessionHandle.notify_nowait``).

        Its writer is stuck on the peer: close the stream under it (the stuck write fails),
        then the session stops as for any closed connection. Never waits.
        """
        self.start_soon(self._stream.aclose)
        self.ref.request_stop()

    async def send_log(
        self,
        level: str,
        data: JsonValue,
        logger_name: str | None,
        related: RequestId | None = None,
    ) -> bool:
        """Send ``notifications/message`` unless ``level`` is below the client's filter.

        ``related``: the client request the message belongs to (a tool logging while it
        runs); over HTTP it then goes on that request's SSE stream, before its answer.
        """
        threshold = self.log_level
        if threshold is not None and LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
            return False
        params: JsonObject = {"level": level, "data": data}
        if logger_name is not None:
            params["logger"] = logger_name
        data_out = self.connection.send_notification("notifications/message", params)
        await self.write(data_out, related)
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
        observer = SLOT.observer if self._options.observed else None
        if observer is None:
            return await self._request(method, params, timeout, on_progress)
        # A request this server sends (sampling, elicitation, roots): seen as a client sees
        # the requests it sends, its trace context in its ``_meta``.
        probe = observer.client_request(
            method, params, self.peer, self.connection.negotiated_version
        )
        try:
            result = await self._request(method, probe.inject(params), timeout, on_progress)
        except BaseException as exc:  # recorded, never swallowed
            finish_raised(probe, exc)
            raise
        probe.finish(result_outcome(method, result))
        return result

    async def _request(
        self,
        method: str,
        params: JsonObject | None,
        timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> JsonObject:
        request_id, data = self.connection.send_request(method, params)
        waiter: Waiter = PendingAnswer()
        if self._outgoing is None:
            self._outgoing = {}
        self._outgoing[request_id] = waiter
        budget = self._options.request_timeout if timeout is None else timeout
        # The callback runs as a helper task of the session, as a notification handler does:
        # a slow one does not hold up the wait, and an error in it is the session's.
        spawn = None if on_progress is None else lambda params: self.start_soon(on_progress, params)
        answered = False
        try:
            await self.write(data)
            try:
                answer = await waiter.wait(budget, on_progress=spawn)
            except trio.TooSlowError:
                message = f"{method} got no answer within {budget:g} s"
                raise RequestTimeout(message, method=method, timeout=budget) from None
            answered = True
        finally:
            # Timed out, cancelled or failed: tell the client to stop (Utilities > Cancellation).
            outgoing = self._outgoing
            if not answered and outgoing and outgoing.pop(request_id, None) is not None:
                await self._cancel_outgoing(request_id)
        return unwrap(method, answer)

    async def _cancel_outgoing(self, request_id: RequestId) -> None:
        try:
            data = self.connection.send_cancel(request_id, "timed out or abandoned")
        except LocalProtocolError:
            return
        with trio.CancelScope(shield=True), trio.move_on_after(1.0):
            await self.write(data)
