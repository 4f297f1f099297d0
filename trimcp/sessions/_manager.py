"""The ``SessionManager`` actor: creates, finds, expires and ends the sessions of a listener.

Network transports (Streamable HTTP, the legacy SSE transport) keep a session alive across
many connections, so something must own sessions apart from any one connection. The manager
does, under the supervisor tree::

    SessionManager            this actor: the table, expiry, limits
    └── SessionSupervisor     simple_one_for_one, restart=temporary (a helper of the manager)
        └── Session x N       one per client session

Creating and ending sessions go through the actor (``create_session``, ``end_session``),
one at a time, so the limit and the table never race. Finding a session is a plain read of
the manager's ``SessionTable`` (``lookup``), done by the transport on every request without
a mailbox round trip: trio runs all of this in one thread and the table is only changed by
the manager between awaits, so a read never sees it half-updated (as with the Registry).

Expiry is on by default: a session idle for ``idle_timeout`` (30 min) is ended; the sweep
runs on trio's clock, so ``MockClock`` drives it in tests. The manager also times every
session's handshake (``SessionOptions.initialization_timeout``) with one timer: the deadlines
come in the order the sessions were created, so the timer is armed for the oldest only, and
a session still in its handshake at its deadline is told so (it closes itself unless it is
initialized by then). A timer per session would cost a task each during the handshake, and
what trio keeps of every disarmed deadline until it prunes them. A session is *idle* when its
stream says it is not busy (no request in flight, no stream attached). At ``max_sessions``
the least recently active idle session is evicted to make room (its client gets 404 and
re-initializes, as the spec provides); only when every session is busy is a new one refused
with ``SessionLimitReached``. Nobody is locked out by sessions that were opened and
abandoned. However a session ends (terminated, expired, evicted, its stream closed, a crash)
its stream is closed, which cancels its requests and frees its streams, and its record leaves
the table.

A graceful stop (``trimcp.supervision.Drain``) moves the manager to its ``DRAINING`` phase:
from then on no session starts (``create_session`` raises ``SessionLimitReached`` saying the
server is shutting down: the HTTP endpoint answers 503, a WebSocket closes with 1013), while
the live sessions drain themselves (``Session``).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import logging
import math
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import trio

from trimcp.actors import DEFER, NORMAL, Actor, ActorRef, Down, monitor
from trimcp.errors import ActorGone, SessionLimitReached, StartFailed
from trimcp.supervision import (
    DRAIN,
    DRAINABLE_PHASES,
    DRAINING,
    ChildSpec,
    Supervisor,
    current_drain,
    start_child,
)

from ._session import InitializationDue, Session

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.actors import ExitReason, ReplyTo
    from trimcp.errors import MessageTooLarge
    from trimcp.supervision import Drain
    from trimcp.transports import MessageStream

    from ._handler import RequestHandler
    from ._options import SessionOptions

__all__ = [
    "ConnectionBound",
    "ManagedStream",
    "ManagerStatistics",
    "SessionLimits",
    "SessionManager",
    "SessionRecord",
    "SessionTable",
]

logger = logging.getLogger(__name__)


class ManagedStream(Protocol):
    """The message stream of a managed session, as the manager sees it."""

    @property
    def busy(self) -> bool:
        """True while a request is in flight or a stream is attached (never expired)."""
        ...

    async def aclose(self) -> None:
        """Close the stream: the session's input ends, its streams are ended."""
        ...


@typing.final
class ConnectionBound:
    """A connection-bound stream (WebSocket, a legacy SSE connection) as the manager sees it.

    Busy for as long as it exists: such a session ends with its connection, never by idle
    expiry or eviction. Every ``MessageStream`` call goes to the wrapped stream.
    """

    __slots__ = ("_stream",)

    busy = True

    def __init__(self, stream: MessageStream) -> None:
        self._stream = stream

    @property
    def wrapped(self) -> MessageStream:
        """The connection's stream (``trimcp.transports.WrappingStream``)."""
        return self._stream

    async def receive_message(self) -> bytes:
        """See ``MessageStream.receive_message``."""
        return await self._stream.receive_message()

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """See ``MessageStream.receive_ready``."""
        return self._stream.receive_ready()

    async def send_message(self, data: bytes) -> None:
        """See ``MessageStream.send_message``."""
        await self._stream.send_message(data)

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """See ``MessageStream.send_messages``."""
        await self._stream.send_messages(messages)

    async def aclose(self) -> None:
        """See ``MessageStream.aclose``."""
        await self._stream.aclose()


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class SessionLimits:
    """How long idle sessions live and how many there may be.

    Attributes:
        idle_timeout: seconds without activity before an idle session is ended
            (``math.inf``: never).
        max_sessions: sessions at once; at the limit the least recently active idle one
            is evicted, and a new one is refused only if none is idle.
        sweep_interval: seconds between expiry sweeps (default: a quarter of
            ``idle_timeout``, at most 60 s).
    """

    idle_timeout: float = 1800.0
    max_sessions: int = 10_000
    sweep_interval: float | None = None

    def __post_init__(self) -> None:
        if not self.idle_timeout > 0:
            raise ValueError("SessionLimits.idle_timeout must be positive (math.inf: never)")
        if self.max_sessions < 1:
            raise ValueError("SessionLimits.max_sessions must be at least 1")
        if self.sweep_interval is not None and not self.sweep_interval > 0:
            raise ValueError("SessionLimits.sweep_interval must be positive")

    @property
    def sweep_every(self) -> float:
        """Seconds between sweeps."""
        if self.sweep_interval is not None:
            return self.sweep_interval
        return min(self.idle_timeout / 4, 60.0)


@typing.final
class SessionRecord:
    """One managed session: its id, stream, actor, when it started and was last active.

    ``session`` is the ``Session`` actor object itself, for read-only looks
    (``describe_session``); None for a record made outside a manager.
    """

    __slots__ = ("created", "last_active", "ref", "session", "session_id", "stream")

    def __init__(
        self,
        session_id: str,
        stream: ManagedStream,
        ref: ActorRef,
        session: Session | None = None,
    ) -> None:
        self.session_id = session_id
        self.stream = stream
        self.ref = ref
        self.session = session
        self.created = self.last_active = trio.current_time()


@typing.final
class SessionTable:
    """The live sessions, least recently active first; read by transports, written by the
    manager."""

    __slots__ = ("_records",)

    def __init__(self) -> None:
        self._records: collections.OrderedDict[str, SessionRecord] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._records

    def lookup(self, session_id: str) -> SessionRecord | None:
        """Return the session and mark it active now, or None (unknown, ended, expired)."""
        record = self._records.get(session_id)
        if record is not None:
            record.last_active = trio.current_time()
            self._records.move_to_end(session_id)
        return record

    def peek(self, session_id: str) -> SessionRecord | None:
        """Return the session without marking it active."""
        return self._records.get(session_id)

    def records(self) -> list[SessionRecord]:
        """Every live session, least recently active first."""
        return list(self._records.values())

    def _add(self, record: SessionRecord) -> None:
        self._records[record.session_id] = record

    def _remove(self, session_id: str) -> SessionRecord | None:
        return self._records.pop(session_id, None)

    def _oldest_idle(self) -> SessionRecord | None:
        for record in self._records.values():
            if not record.stream.busy:
                return record
        return None


# --- messages ------------------------------------------------------------------------------


@typing.final
@dataclass(frozen=True, slots=True)
class _Create:
    session_id: str
    stream: MessageStream


@typing.final
@dataclass(frozen=True, slots=True)
class _Terminate:
    session_id: str
    reason: str


@typing.final
@dataclass(frozen=True, slots=True)
class _Sweep:
    pass


@typing.final
@dataclass(frozen=True, slots=True)
class _HandshakesDue:
    pass


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class ManagerStatistics:
    """Counters of one manager."""

    live: int
    created: int
    expired: int
    evicted: int
    refused: int
    terminated: int


class SessionManager(Actor):
    """Owns the sessions of one listener (see the module docstring).

    ``handler`` serves every session; ``options`` are each session's.
    """

    mailbox_size = 1024
    phase_table = DRAINABLE_PHASES

    def __init__(
        self,
        handler: RequestHandler,
        options: SessionOptions,
        limits: SessionLimits | None = None,
    ) -> None:
        self.table = SessionTable()
        self.limits = limits or SessionLimits()
        self._handler = handler
        # The sessions' handshakes are timed here (see the module docstring), not by each.
        self._handshake_timeout = options.initialization_timeout
        self._options = dataclasses.replace(options, initialization_timeout=math.inf)
        self._supervisor: ActorRef | None = None
        self._by_ref: dict[ActorRef, str] = {}
        # Sessions in their handshake window with their deadlines, oldest first.
        self._handshakes: collections.OrderedDict[ActorRef, float] = collections.OrderedDict()
        self._handshake_timer_armed = False
        self._counts = {"created": 0, "expired": 0, "evicted": 0, "refused": 0, "terminated": 0}
        self._app_drain: Drain | None = None
        # The session the template built last (``_build_session``), for its record.
        self._built: Session | None = None

    @property
    def handler(self) -> RequestHandler:
        """The server behind every session (a per-request request is served by it too)."""
        return self._handler

    @property
    def session_options(self) -> SessionOptions:
        """The options each session runs with."""
        return self._options

    # --- the public API (called from any task) ---------------------------------------------

    async def create_session(self, session_id: str, stream: MessageStream) -> SessionRecord:
        """Start a session on ``stream`` under ``session_id`` (through the actor's mailbox).

        ``stream`` must also be a ``ManagedStream``.

        Raises:
            SessionLimitReached: ``max_sessions`` sessions exist and none is idle.
        """
        return typing.cast("SessionRecord", await self.ref.call(_Create(session_id, stream)))

    async def end_session(self, session_id: str, reason: str = "terminated") -> bool:
        """End a session now (DELETE); return False if it was not there."""
        return typing.cast("bool", await self.ref.call(_Terminate(session_id, reason)))

    @property
    def draining(self) -> bool:
        """True once a graceful stop began: no new session starts."""
        return self.phase is DRAINING

    # --- the graceful stop (trimcp.supervision.Drainable) ------------------------------------

    @property
    def in_flight(self) -> int:
        """Nothing of its own: the sessions count their requests themselves."""
        return 0

    def begin_drain(self) -> None:
        """Start no more sessions (see the module docstring)."""
        if not self.stopping and self.phase is not DRAINING:
            self.transition(DRAIN)

    def abort_in_flight(self, reason: str) -> None:
        """Nothing to cancel here (the sessions abort their own requests)."""

    def statistics(self) -> ManagerStatistics:
        """Return the live count and what happened so far."""
        return ManagerStatistics(live=len(self.table), **self._counts)

    @property
    def session_supervisor(self) -> ActorRef | None:
        """The supervisor of this manager's sessions, once started (``describe_tree``)."""
        return self._supervisor

    # --- the actor --------------------------------------------------------------------------

    async def init(self) -> None:
        """Start the session supervisor and the expiry sweep."""
        template = ChildSpec.for_actor("session", self._build_session, restart="temporary")
        supervisor = Supervisor([template], strategy="simple_one_for_one")
        started = await self.start_task(functools.partial(supervisor.run, name=None))
        self._supervisor = typing.cast("ActorRef", started)
        if self.limits.idle_timeout != math.inf:
            self.send_after(self.limits.sweep_every, _Sweep())
        drain = current_drain()
        if drain is not None:
            self._app_drain = drain
            drain.add(self)

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        """Create or terminate a session."""
        if isinstance(message, _Create):
            try:
                return await self._create(message)
            except (SessionLimitReached, StartFailed) as exc:
                # The caller's problem, not the manager's: it keeps running.
                reply_to.fail(exc)
                return DEFER
        if isinstance(message, _Terminate):
            record = self.table.peek(message.session_id)
            if record is None:
                return False
            await self._end(record, "terminated", message.reason)
            return True
        return await super().handle_call(message, reply_to)

    async def handle_info(self, message: object) -> None:
        """Sweep expired sessions; forget sessions that ended."""
        if isinstance(message, _Sweep):
            await self._sweep()
            self.send_after(self.limits.sweep_every, _Sweep())
        elif isinstance(message, _HandshakesDue):
            self._handshake_timer_armed = False
            self._check_handshakes()
        elif isinstance(message, Down):
            self._handshakes.pop(message.ref, None)
            session_id = self._by_ref.pop(message.ref, None)
            if session_id is not None:
                record = self.table.peek(session_id)
                if record is not None and record.ref is message.ref:
                    self.table._remove(session_id)
                    await record.stream.aclose()
        else:
            await super().handle_info(message)

    async def terminate(self, reason: ExitReason) -> None:
        """Close every session's stream (the supervisor then stops the sessions)."""
        if self._app_drain is not None:
            self._app_drain.discard(self)
        for record in self.table.records():
            self.table._remove(record.session_id)
            with trio.CancelScope(shield=True):
                await record.stream.aclose()

    # --- internals --------------------------------------------------------------------------

    def _build_session(self, stream: MessageStream) -> Session:
        # Runs inside start_child, which _create awaits one at a time: the session built
        # last is the one that start_child returns.
        session = Session(stream, handler=self._handler, options=self._options)
        self._built = session
        return session

    async def _create(self, message: _Create) -> SessionRecord:
        if self.phase is DRAINING:
            self._counts["refused"] += 1
            raise SessionLimitReached(
                "the server is shutting down and starts no new sessions; retry once it is back"
            )
        if len(self.table) >= self.limits.max_sessions:
            victim = self.table._oldest_idle()
            if victim is None:
                self._counts["refused"] += 1
                raise SessionLimitReached(
                    f"all {self.limits.max_sessions} sessions are busy; try again shortly "
                    "(the server's sessions.max_sessions limit)"
                )
            logger.info(
                "session limit %d reached: evicted the least recently active idle session",
                self.limits.max_sessions,
            )
            await self._end(victim, "evicted", "evicted")
        assert self._supervisor is not None
        info = await start_child(self._supervisor, args=(message.stream,))
        ref = typing.cast("ActorRef", info.value)
        stream = typing.cast("ManagedStream", message.stream)
        record = SessionRecord(message.session_id, stream, ref, self._built)
        self._built = None
        self.table._add(record)
        self._by_ref[ref] = message.session_id
        monitor(ref)
        self._counts["created"] += 1
        if self._handshake_timeout != math.inf:
            self._handshakes[ref] = trio.current_time() + self._handshake_timeout
            self._arm_handshake_timer()
        return record

    def _arm_handshake_timer(self) -> None:
        if self._handshakes and not self._handshake_timer_armed:
            deadline = next(iter(self._handshakes.values()))
            self.send_after(deadline - trio.current_time(), _HandshakesDue())
            self._handshake_timer_armed = True

    def _check_handshakes(self) -> None:
        """Tell the sessions whose handshake deadline has come; arm for the next one."""
        now = trio.current_time()
        handshakes = self._handshakes
        while handshakes:
            ref, deadline = next(iter(handshakes.items()))
            if deadline > now:
                break
            handshakes.popitem(last=False)
            with contextlib.suppress(ActorGone):
                ref.send_info(InitializationDue())
        self._arm_handshake_timer()

    async def _sweep(self) -> None:
        deadline = trio.current_time() - self.limits.idle_timeout
        expired = [
            record
            for record in self.table.records()
            if record.last_active <= deadline and not record.stream.busy
        ]
        for record in expired:
            await self._end(record, "expired", "expired")
        if expired:
            logger.info("ended %d session(s) idle for %g s", len(expired), self.limits.idle_timeout)

    async def _end(self, record: SessionRecord, counter: str, reason: str) -> None:
        """Take a live session out of the table, count it under ``counter``, and end it."""
        self.table._remove(record.session_id)
        self._handshakes.pop(record.ref, None)
        self._counts[counter] += 1
        logger.debug("session %s ended: %s", record.session_id[:8], reason)
        # Closing the stream ends the session's input: it cancels nothing by itself, so stop
        # the actor too (its in-flight requests are cancelled with it).
        await record.stream.aclose()
        record.ref.request_stop(NORMAL)
