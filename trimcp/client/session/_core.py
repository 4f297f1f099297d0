"""The engine under ``ClientSession``: one ``ClientConnection`` driven over a ``MessageStream``.

Three tasks in the session's nursery, plus one per server request being answered:

* the **reader** feeds every message to the protocol core and routes the events, without ever
  waiting on application code: answers and progress go to the waiting caller's channel,
  notifications to the notification task, server requests to a new handler task;
* the **writer** is the only task that sends (the ``MessageStream`` contract), so a caller
  cancelled mid-request never leaves half a message on the wire;
* the **notification task** runs the application's callbacks one at a time, in order.

Not an actor: its state has one owner per field (the reader routes, callers own their
pending entry), nothing queues behind a mailbox, and a request is answered in the caller's
own task. A caller waits on its own ``PendingAnswer`` (the wait the server's sessions use
too); the reader hands it progress as well, so timeouts that progress resets and the
``on_progress`` callback both run in the caller's task.

When the transport ends (``TransportClosed``/``TransportBroken``, including ``ServerExited``)
every pending request fails at once with ``ConnectionLost`` (the transport's error as
``__cause__``) and later ones fail without being sent. ``SessionExpired`` (HTTP 404 for the
session id) starts one renewal: a new ``ClientConnection`` and a new handshake over the same
stream; a request whose *send* was refused is retried once on the new session, requests that
were already in flight fail (they may have run).
"""

from __future__ import annotations

import contextvars
import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, final

import trio

from trimcp.errors import (
    JsonRpcError,
    LocalProtocolError,
    MessageTooLarge,
    RemoteProtocolError,
    RequestTimeout,
    SessionExpired,
    TransportBroken,
    TransportClosed,
)
from trimcp.protocol import (
    CancelReceived,
    ErrorObject,
    ErrorResponse,
    InitializeCompleted,
    InitializeResult,
    NotificationReceived,
    Phase,
    ProgressReceived,
    ProtocolViolation,
    ReplyToSend,
    RequestReceived,
    ResponseReceived,
    Result,
    UnexpectedResponse,
    error_object_for,
)
from trimcp.telemetry import SLOT, Peer, finish_raised, result_outcome
from trimcp.transports import PendingAnswer, ReadyMarker

from ._errors import CLOSED_BY_CLIENT, connection_lost, error_from
from ._peer import peer_of, with_session_id
from ._results import Progress

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.protocol import (
        ClientConnection,
        Event,
        JsonObject,
        Notification,
        Request,
        RequestId,
    )
    from trimcp.telemetry import ClientProbe, RequestProbe, SessionProbe
    from trimcp.transports import MessageStream

    from ._options import ClientSessionOptions

logger = logging.getLogger(__name__)


@final
@dataclass(frozen=True, slots=True)
class _Lost:
    """The connection ended (or broke the protocol) while the request was pending."""

    cause: BaseException


@final
@dataclass(frozen=True, slots=True)
class _SendExpired:
    """The transport refused to send the request: the server forgot the session."""

    cause: SessionExpired


#: What answers a request: the server's result or error, or why no answer will come.
_Answer: TypeAlias = Result | ErrorObject | InitializeResult | _Lost | _SendExpired
#: Pending requests are keyed by (session generation, id): a renewed session counts ids
#: from 1 again.
_Key: TypeAlias = tuple[int, "RequestId"]


@final
@dataclass(frozen=True, slots=True)
class _Outgoing:
    data: bytes
    key: _Key | None = None


@final
@dataclass(frozen=True, slots=True)
class _Sent:
    """How one request is waited for (``SessionCore.request``'s keyword arguments)."""

    timeout: float | None
    on_progress: ProgressCallback | None
    on_sent: Callable[[RequestId], object] | None


class _RetryableExpiry(Exception):  # an internal signal, never escapes the core
    def __init__(self, generation: int, cause: SessionExpired) -> None:
        super().__init__(str(cause))
        self.generation = generation
        self.cause = cause


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SessionHooks:
    """What the layer above plugs into the core.

    ``answer(request)`` returns the result of a server request or raises (a ``JsonRpcError``
    goes to the server as is, anything else as -32603 after being logged);
    ``notify(notification)`` handles one server notification.
    """

    answer: Callable[[Request], Awaitable[JsonObject]]
    notify: Callable[[Notification], Awaitable[None]]


ProgressCallback: TypeAlias = "Callable[[Progress], Awaitable[None] | None]"


@final
class SessionCore:
    """Requests, answers and the handshake over one stream (see the module docstring)."""

    def __init__(
        self,
        stream: MessageStream,
        new_connection: Callable[[], ClientConnection],
        options: ClientSessionOptions,
        hooks: SessionHooks,
    ) -> None:
        self.options = options
        self._stream = stream
        self._new_connection = new_connection
        self._hooks = hooks
        self._conn = new_connection()
        self._generation = 0
        self._pending: dict[_Key, PendingAnswer[_Answer, Progress]] = {}
        self._serving: dict[_Key, trio.CancelScope] = {}
        self._init_key: _Key | None = None
        self._outbox_send, self._outbox = trio.open_memory_channel[_Outgoing](math.inf)
        self._inbox_send, self._inbox = trio.open_memory_channel["Notification"](math.inf)
        # Notifications queued for the hooks, and handled by them: an answer that arrives
        # after a notification is handed over only once that notification was handled
        # (``_notes_before``), so a tool's last log line is never seen after its result.
        self._notes_queued = 0
        self._notes_handled = 0
        self._notes_marks: dict[_Key, int] = {}
        self._notes_waiters: list[tuple[int, trio.Event]] = []
        self._notify_task: trio.lowlevel.Task | None = None
        self._notes_closed = False
        self._ready = trio.Event()  # set once requests may be sent (after each handshake)
        self._renewing = False
        self._end_reason: BaseException | None = None
        self._ended = trio.Event()
        self._writer_done = trio.Event()
        self._nursery: trio.Nursery | None = None
        #: Where the server is, as telemetry reports it.
        self.peer: Peer = peer_of(stream)
        # Sees the session from ``start`` to its end while telemetry is on.
        self._observed: SessionProbe | None = None

    # --- state ----------------------------------------------------------------------------

    @property
    def connection(self) -> ClientConnection:
        """The protocol core of the current session (a new one after each renewal)."""
        return self._conn

    @property
    def initialize_result(self) -> InitializeResult:
        """What the server answered to the last ``initialize``."""
        result = self._conn.initialize_result
        if result is None:
            raise LocalProtocolError("the handshake has not finished")
        return result

    @property
    def protocol_version(self) -> str | None:
        """The version negotiated (or declared on every request); None before that."""
        result = self._conn.initialize_result
        return None if result is None else result.protocol_version

    @property
    def end_reason(self) -> BaseException | None:
        """Why the connection ended (None while it is up)."""
        return self._end_reason

    async def wait_ended(self) -> BaseException:
        """Wait until the connection ends; return why."""
        await self._ended.wait()
        assert self._end_reason is not None
        return self._end_reason

    # --- running --------------------------------------------------------------------------

    def start(self, nursery: trio.Nursery) -> None:
        """Start the reader, writer and notification tasks in ``nursery``."""
        self._nursery = nursery
        observer = SLOT.observer
        if observer is not None:
            self._observed = observer.client_session(self.peer)
        nursery.start_soon(self._read_loop)
        nursery.start_soon(self._write_loop)
        nursery.start_soon(self._notify_loop)

    async def close(self) -> None:
        """Fail what is pending, then let queued messages go out (``close_timeout``)."""
        self._end(TransportClosed(CLOSED_BY_CLIENT))
        self._outbox_send.close()
        with trio.move_on_after(self.options.close_timeout):
            await self._writer_done.wait()

    def _end(self, reason: BaseException) -> None:
        if self._end_reason is not None:
            return
        self._end_reason = reason
        if self._observed is not None:
            closed = isinstance(reason, TransportClosed) and str(reason) == CLOSED_BY_CLIENT
            self._observed.end(self.protocol_version, None if closed else type(reason).__name__)
        if self._conn.phase is not Phase.CLOSED:
            self._conn.close()
        for waiter in self._pending.values():
            waiter.answer(_Lost(reason))
        for scope in self._serving.values():
            scope.cancel()
        self._ready.set()  # wake requests waiting for a renewal; they see the end
        self._ended.set()

    def _check_open(self, method: str) -> None:
        if self._end_reason is not None:
            raise connection_lost(method, self._end_reason) from self._end_reason

    def _enqueue(self, data: bytes, key: _Key | None = None) -> None:
        if data:
            try:
                self._outbox_send.send_nowait(_Outgoing(data, key))
            except trio.ClosedResourceError:
                logger.debug("session closed; a message to the server was dropped")

    # --- the handshake --------------------------------------------------------------------

    async def handshake(self) -> InitializeResult:
        """Send ``initialize``, wait for the answer, send ``notifications/initialized``.

        Raises:
            RequestTimeout: no answer within ``request_timeout`` (initialize is not cancelled;
                the spec forbids it).
            JsonRpcError: the server refused ``initialize``.
            RemoteProtocolError: it answered with a version we do not speak, or garbage.
            TransportBroken / TransportClosed / ServerExited: the transport ended first.
        """
        self._check_open("initialize")
        generation = self._generation
        request_id, data = self._conn.send_initialize()
        key = (generation, request_id)
        arrival = await self._exchange(key, data, "initialize", None, None)
        self._init_key = None
        if isinstance(arrival, ErrorObject):
            raise error_from(arrival, "initialize")
        if isinstance(arrival, _Lost):
            raise arrival.cause
        if not isinstance(arrival, InitializeResult):
            raise RemoteProtocolError(f"unexpected answer to initialize: {arrival!r}")
        self._enqueue(self._conn.send_initialized())
        self.mark_ready()
        return arrival

    def switch_version(self, version: str, new_connection: Callable[[], ClientConnection]) -> None:
        """Speak ``version`` (maybe the other era) while the session opens.

        The protocol core stays (``ClientConnection.switch_version``: ids go on counting,
        so the answer to a probe that timed out matches nothing); ``new_connection`` makes
        the core of a renewed session later.
        """
        self._new_connection = new_connection
        self._conn.switch_version(version)

    async def probe(
        self, method: str, params: JsonObject | None, *, timeout: float | None
    ) -> Result | ErrorObject:
        """Send one request before the session is ready and return the raw answer.

        The era probe (``server/discover``): unlike ``request`` it does not wait for a
        handshake, and a probe that gets no answer in time is not cancelled: a legacy
        server would choke on ``notifications/cancelled`` for a request it never knew.

        Raises:
            RequestTimeout: no answer within ``timeout`` (None: ``request_timeout``).
            TransportBroken / TransportClosed / ServerExited: the transport ended first
                (its own error, as ``handshake`` raises it).
            RemoteProtocolError: the server broke the protocol.
        """
        self._check_open(method)
        request_id, data = self._conn.send_request(method, params)
        key = (self._generation, request_id)
        arrival = await self._exchange(key, data, method, timeout, None, cancel=False)
        if isinstance(arrival, Result | ErrorObject):
            return arrival
        if isinstance(arrival, _Lost):
            raise arrival.cause  # as for initialize: the transport's own words (ServerExited)
        raise RemoteProtocolError(f"unexpected answer to {method}: {arrival!r}")

    def mark_ready(self) -> None:
        """Let requests go out: the per-request era is ready once it knows the server."""
        if isinstance(self._stream, ReadyMarker):  # a ServerProcess: exits are now "in operation"
            self._stream.mark_ready()
        self._ready.set()

    async def _renew(self, generation: int) -> None:
        """Start a new session after ``SessionExpired``, once per expired generation."""
        if generation != self._generation or self._renewing or self._end_reason is not None:
            await self._ready.wait()
            return
        logger.info("the server ended the session; initializing a new one")
        self._renewing = True
        self._ready = trio.Event()
        self._generation += 1
        expired = SessionExpired("the server ended the session while the request was pending")
        for key, waiter in list(self._pending.items()):
            if key[0] == generation:
                waiter.answer(_Lost(expired))
        for key, scope in list(self._serving.items()):
            if key[0] == generation:
                scope.cancel()
        self._conn = self._new_connection()
        try:
            await self.handshake()
        except (JsonRpcError, RemoteProtocolError, RequestTimeout, TransportBroken) as exc:
            self._end(exc)
        finally:
            self._renewing = False
            self._ready.set()

    # --- requests -------------------------------------------------------------------------

    async def request(  # the telemetry hooks inline: no call when off
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        on_sent: Callable[[RequestId], object] | None = None,
    ) -> JsonObject:
        """Send a request and return its result (see ``ClientSession.request``).

        ``on_sent`` is called with the request's JSON-RPC id just before it is queued (a
        ``subscriptions/listen`` stream is known by it).
        """
        sent = _Sent(timeout, on_progress, on_sent)
        observer = SLOT.observer
        probe: ClientProbe | None = None
        if observer is not None:
            self.peer = peer = with_session_id(self.peer, self._stream)
            probe = observer.client_request(method, params, peer, self.protocol_version)
            params = probe.inject(params)
        try:
            # A send the server refused (its session expired) is tried once more, on a
            # renewed session; written out here so that a request pays no extra coroutine.
            expired: int | None = None
            try:
                result = await self._request_once(method, params, sent)
            except _RetryableExpiry as first:
                expired = first.generation
            if expired is not None:
                await self._renew(expired)
                try:
                    result = await self._request_once(method, params, sent)
                except _RetryableExpiry as second:
                    raise second.cause from None
        except BaseException as exc:  # recorded, never swallowed
            if probe is not None:
                finish_raised(probe, exc)
            raise
        if probe is not None:
            probe.finish(result_outcome(method, result))
        return result

    async def _request_once(
        self, method: str, params: JsonObject | None, sent: _Sent
    ) -> JsonObject:
        await self._ready.wait()
        self._check_open(method)
        generation = self._generation
        request_id, data = self._conn.send_request(method, params)
        if sent.on_sent is not None:
            sent.on_sent(request_id)
        key = (generation, request_id)
        timeout, on_progress = sent.timeout, sent.on_progress
        try:
            arrival = await self._exchange(key, data, method, timeout, on_progress)
        finally:
            mark = self._notes_marks.pop(key, None)
        if mark is not None:
            await self._notes_before(mark)
        if isinstance(arrival, Result):
            return arrival.result
        if isinstance(arrival, ErrorObject):
            raise error_from(arrival, method)
        if isinstance(arrival, _SendExpired):
            raise _RetryableExpiry(generation, arrival.cause)
        if isinstance(arrival, _Lost):
            if isinstance(arrival.cause, SessionExpired | RemoteProtocolError):
                raise type(arrival.cause)(f"{method} failed: {arrival.cause}") from arrival.cause
            raise connection_lost(method, arrival.cause) from arrival.cause
        raise RemoteProtocolError(f"unexpected answer to {method}: {arrival!r}")

    async def _exchange(  # noqa: PLR0913  # one request's facts and the one switch
        self,
        key: _Key,
        data: bytes,
        method: str,
        timeout: float | None,
        on_progress: ProgressCallback | None,
        *,
        cancel: bool = True,
    ) -> _Answer:
        """Send ``data`` and wait for what answers ``key``; cancel it if we stop waiting
        (unless ``cancel`` is False: ``initialize``, and the era probe)."""
        waiter: PendingAnswer[_Answer, Progress] = PendingAnswer()
        self._pending[key] = waiter
        if method == "initialize":
            self._init_key = key
            cancel = False
        conn = self._conn
        reason = "the client stopped waiting"
        answered = False
        try:
            self._enqueue(data, key)
            limit = self.options.request_timeout if timeout is None else timeout
            try:
                arrival = await waiter.wait(
                    limit,
                    on_progress=on_progress,
                    restart_on_progress=self.options.reset_timeout_on_progress,
                    limit=self.options.max_request_timeout,
                )
            except trio.TooSlowError:
                reason = f"no answer within {limit:g} s"
                raise RequestTimeout(
                    f"{method} got no answer within {limit:g} s; "
                    + ("it was cancelled" if cancel else "it was not cancelled"),
                    method=method,
                    timeout=limit,
                ) from None
            answered = True
            return arrival
        finally:
            del self._pending[key]
            if not answered and cancel:
                self._send_cancel(conn, key[1], reason)

    def _send_cancel(self, conn: ClientConnection, request_id: RequestId, reason: str) -> None:
        if conn is not self._conn or conn.phase is Phase.CLOSED:
            return
        try:
            data = conn.send_cancel(request_id, reason)
        except LocalProtocolError:  # answered meanwhile, or never sent
            return
        self._enqueue(data)

    def notify(self, method: str, params: JsonObject | None = None) -> None:
        """Queue a notification to the server (sent by the writer, in order)."""
        self._check_open(method)
        self._enqueue(self._conn.send_notification(method, params))

    # --- the writer -----------------------------------------------------------------------

    async def _write_loop(self) -> None:
        try:
            async for item in self._outbox:
                try:
                    await self._stream.send_message(item.data)
                except SessionExpired as exc:
                    self._on_send_expired(item, exc)
                except (TransportClosed, TransportBroken) as exc:
                    self._end(exc)
                    return
        finally:
            self._writer_done.set()

    def _on_send_expired(self, item: _Outgoing, exc: SessionExpired) -> None:
        waiter = None if item.key is None else self._pending.get(item.key)
        if waiter is not None and item.key != self._init_key:
            waiter.answer(_SendExpired(exc))
        elif waiter is not None:
            waiter.answer(_Lost(exc))
        else:
            logger.warning("the server ended the session; a notification or answer was lost")

    # --- the reader -----------------------------------------------------------------------

    async def _read_loop(self) -> None:
        expired_in: int | None = None
        while self._end_reason is None:
            try:
                data = await self._stream.receive_message()
            except MessageTooLarge as exc:
                logger.warning("dropped a message from the server: %s", exc)
                continue
            except SessionExpired as exc:
                if expired_in == self._generation:
                    self._end(exc)  # the new session expired at once: give up
                    return
                expired_in = self._generation
                assert self._nursery is not None
                self._nursery.start_soon(self._renew, self._generation)
                continue
            except (TransportClosed, TransportBroken) as exc:
                self._end(exc)
                return
            self._feed(data)

    def _feed(self, data: bytes) -> None:
        if self._conn.phase is Phase.CLOSED:
            return
        logger.debug("received %r", data[:500])
        for event in self._conn.receive(data):
            self._route(event)

    def _deliver(self, key: _Key | None, answer: _Answer) -> None:
        waiter = None if key is None else self._pending.get(key)
        if waiter is not None:
            if key is not None and self._notes_handled < self._notes_queued:
                self._notes_marks[key] = self._notes_queued
            waiter.answer(answer)

    async def _notes_before(self, mark: int) -> None:
        """Wait until the first ``mark`` notifications (those that came before an answer)
        were handled.

        Not from the notification task itself (a hook that makes a request would wait for
        its own notification), and not past the session's end.
        """
        if self._notes_handled >= mark or self._notes_closed:
            return
        if trio.lowlevel.current_task() is self._notify_task or self._end_reason is not None:
            return
        caught_up = trio.Event()
        self._notes_waiters.append((mark, caught_up))
        await caught_up.wait()

    def _note_handled(self) -> None:
        self._notes_handled += 1
        if self._notes_waiters:
            done = self._notes_handled
            waiting = self._notes_waiters
            self._notes_waiters = [(mark, event) for mark, event in waiting if mark > done]
            for mark, event in waiting:
                if mark <= done:
                    event.set()

    def _route(self, event: Event) -> None:  # noqa: C901, PLR0912  # one branch per event type
        generation = self._generation
        if isinstance(event, ResponseReceived):
            response = event.response
            if response.id is not None:
                answer = response.error if isinstance(response, ErrorResponse) else response
                self._deliver((generation, response.id), answer)
        elif isinstance(event, ProgressReceived):
            params = event.params
            waiter = self._pending.get((generation, event.request_id))
            if waiter is not None:
                waiter.progress(
                    Progress(progress=params.progress, total=params.total, message=params.message)
                )
        elif isinstance(event, NotificationReceived):
            self._notes_queued += 1
            self._inbox_send.send_nowait(event.notification)
        elif isinstance(event, RequestReceived):
            self._start_serving(event.request)
        elif isinstance(event, CancelReceived):
            scope = self._serving.get((generation, event.request_id))
            if scope is not None:
                scope.cancel()
        elif isinstance(event, ReplyToSend):
            self._reply(event)
        elif isinstance(event, InitializeCompleted):
            self._deliver(self._init_key, event.result)
        elif isinstance(event, ProtocolViolation):
            logger.error("the server broke the protocol: %s", event.error)
            if self._init_key is not None and self._init_key in self._pending:
                self._deliver(self._init_key, _Lost(event.error))
            else:
                self._end(event.error)
        elif isinstance(event, UnexpectedResponse):
            logger.debug("ignored a response matching no pending request: %r", event.response)

    def _reply(self, event: ReplyToSend) -> None:
        if event.error is not None and event.request_id is None:
            # Junk from the server (not JSON, not JSON-RPC). An error without an id could not
            # be matched to anything, and a server printing stray lines would get one per
            # line: log it and go on.
            logger.warning("ignored an unreadable message from the server: %s", event.error.message)
            return
        self._enqueue(event.data)

    # --- server requests and notifications ------------------------------------------------

    def _start_serving(self, request: Request) -> None:
        """Answer a request the server sent (sampling, elicitation, roots) in a task."""
        assert self._nursery is not None
        observer = SLOT.observer
        if observer is None:
            self._nursery.start_soon(self._serve, self._conn, request, None)
            return
        # Seen as a server sees the requests it serves: its span continues the trace in the
        # request's _meta, and is the current one in the handler's context. A task started
        # inside a context gets a copy of it: the handler's task is started in that one.
        self.peer = peer = with_session_id(self.peer, self._stream)
        context = contextvars.copy_context()
        probe = observer.server_request(
            request.method, request.id, request.params, peer, self.protocol_version, context
        )
        context.run(self._nursery.start_soon, self._serve, self._conn, request, probe)

    async def _serve(
        self, conn: ClientConnection, request: Request, probe: RequestProbe | None
    ) -> None:
        key = (self._generation, request.id)
        with trio.CancelScope() as scope:
            self._serving[key] = scope
            try:
                result = await self._hooks.answer(request)
            except JsonRpcError as exc:
                answer: JsonObject | ErrorObject = error_object_for(exc)
            except Exception as exc:
                logger.exception("the handler for the server's %s failed", request.method)
                answer = error_object_for(exc)
            except BaseException:  # cancelled: recorded, never swallowed
                if probe is not None:
                    probe.finish("cancelled")
                raise
            else:
                answer = result
            finally:
                del self._serving[key]
            if probe is not None:
                if isinstance(answer, ErrorObject):
                    probe.finish("error", answer.code)
                else:
                    probe.finish(result_outcome(request.method, answer))
            self._finish(conn, request, answer)
        if scope.cancelled_caught:  # the server cancelled it: no answer, but stop tracking
            self._finish(conn, request, error_object_for(RuntimeError("cancelled")))

    def _finish(
        self, conn: ClientConnection, request: Request, answer: JsonObject | ErrorObject
    ) -> None:
        if conn is not self._conn or conn.phase is Phase.CLOSED:
            return
        try:
            if isinstance(answer, ErrorObject):
                data = conn.send_error(request.id, answer)
            else:
                data = conn.send_result(request.id, answer)
        except LocalProtocolError:  # the handler's result is not JSON
            logger.exception("could not answer the server's %s", request.method)
            try:
                data = conn.send_error(request.id, error_object_for(RuntimeError("bad result")))
            except LocalProtocolError:
                return
        self._enqueue(data)

    async def _notify_loop(self) -> None:
        self._notify_task = trio.lowlevel.current_task()
        try:
            async for notification in self._inbox:
                try:
                    await self._hooks.notify(notification)
                except Exception:
                    logger.exception("a callback for the server's %s failed", notification.method)
                finally:
                    self._note_handled()
        finally:
            # No more notifications will be handled: nobody may wait for one.
            self._notes_closed = True
            waiting, self._notes_waiters = self._notes_waiters, []
            for _, event in waiting:
                event.set()
