"""The event store behind resumable SSE streams (MCP Streamable HTTP).

MCP 2025-11-25, Transports, Streamable HTTP, "Resumability and Redelivery": a server MAY put
an ``id`` on each SSE event; it MUST be unique across all streams of the session and SHOULD
encode the stream it belongs to. A client that lost its connection GETs the endpoint with
``Last-Event-ID``; the server MAY replay the events after it *from that stream* and MUST NOT
replay events of another stream. The HTTP layer stores every event it sends (and every event
it would have sent to a stream whose connection is gone) here, and replays from here.

One store serves every session, and every method takes the session id:

* isolation by construction: an id is only ever looked up among the requesting session's
  streams, so a ``Last-Event-ID`` copied from another session cannot reach its events;
* one object to configure and account for (``statistics``), and the natural shape for a
  shared backend such as Redis (keys prefixed by session), which is why the seam is the
  async ``EventStore`` protocol;
* the store hands out stream ids (``open_stream``) and never reuses one within a session,
  even once the stream is forgotten, so a stale ``Last-Event-ID`` cannot land in a newer
  stream, and the store can tell "this stream existed but its events are gone"
  (``EventsLost``) from "never issued" (``UnknownEventId``); the HTTP layer answers the
  two differently.

``MemoryEventStore``'s ids are ``s<stream>-<seq>`` (``s7-0``, ``s7-1``, as in
EXAMPLES.md section 5): decimal numbers without leading zeros, so each id has one spelling,
and visible ASCII, so it is a valid ``Last-Event-ID`` header. ``<seq>`` counts the events of
its stream from 0; a stream number is never reused within a session, so ids are unique in
the session. ``_parse_event_id`` rejects everything else, including absurdly long numbers.

A stream's life: ``open_stream``; ``store_event(..., None)`` for the priming event, then one
``store_event`` per message, whether or not a connection is there to take it; ``end_stream``
once its last message (the response) is stored, after which it stays replayable until its
events expire; ``forget_stream`` / ``forget_session`` to drop things at once. A session id
is not reused, so a session forgotten and then used again simply starts afresh.

Not here: SSE framing (``_sse.py``), HTTP, or deciding which stream a message belongs to.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from itertools import islice
from typing import Protocol, TypeAlias, final

import trio

from trimcp.errors import EventsLost, TransportClosed, UnknownEventId

__all__ = [
    "EventSender",
    "EventStore",
    "EventStoreStatistics",
    "MemoryEventStore",
]

EventSender: TypeAlias = Callable[[str, bytes], Awaitable[None]]
"""``send(event_id, message)``: what ``replay_events_after`` awaits for each event."""

# At most 18 digits: every such number fits in 63 bits and parses without int()'s
# 4300-digit guard ever coming into play.
_EVENT_ID = re.compile(r"s(0|[1-9][0-9]{0,17})-(0|[1-9][0-9]{0,17})", re.ASCII)


class EventStore(Protocol):
    """Where a server keeps its SSE events so that clients can resume streams.

    Implementations must guarantee:

    * Ids are visible ASCII (0x21-0x7E), since they travel in SSE ``id`` fields and come back
      in ``Last-Event-ID`` headers; an event id is unique among all the ids its session ever
      got, and names its stream.
    * ``replay_events_after`` sends the events of one stream of the requesting session,
      in the order they were stored, and either every stored message after the given id or
      none (``EventsLost``): it never skips one silently.
    * A forgotten session or stream leaves nothing behind.
    * Methods may be called concurrently, from several tasks.

    Cancelling a method may leave its write done or undone, never half done.
    """

    async def open_stream(self, session_id: str) -> str:
        """Start a new stream in the session (creating the session's record if needed).

        Returns its id, which no earlier stream of the session had.
        """
        ...

    async def store_event(self, session_id: str, stream_id: str, message: bytes | None) -> str:
        """Append an event to an open stream; return its new event id.

        ``message`` is one JSON-RPC message, or ``None`` for a priming event (an id with
        empty data), which takes an id but is never replayed.

        Raises:
            TransportClosed: the stream was ended or forgotten (or its session was), or was
                never opened.
        """
        ...

    async def replay_events_after(
        self, session_id: str, last_event_id: str, send: EventSender
    ) -> str:
        """Send the messages stored after ``last_event_id`` on its stream; return the stream id.

        ``send(event_id, message)`` is awaited once per message, oldest first; priming events
        are skipped. If ``send`` raises or the call is cancelled, the events sent so far stay
        sent and the store is unchanged. Events stored while the replay runs are not part of
        it: keep new events of the stream away from the resumed connection until the call
        returns (a lock per session or stream around storing-and-writing and around
        replaying-and-attaching does it).

        Raises:
            UnknownEventId: ``last_event_id`` is malformed or the session never issued it.
            EventsLost: the id was issued, but events after it are no longer stored (the
                per-stream bound, the time to live, or the stream was forgotten).
        """
        ...

    async def end_stream(self, session_id: str, stream_id: str) -> None:
        """Mark a stream complete: it takes no more events and goes once they expire.

        Its stored events stay replayable until then. Unknown streams are ignored.
        """
        ...

    async def forget_stream(self, session_id: str, stream_id: str) -> None:
        """Drop a stream and its events now. Unknown streams are ignored."""
        ...

    async def forget_session(self, session_id: str) -> None:
        """Drop everything of the session, e.g. when it ends. Unknown sessions are ignored."""
        ...


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class EventStoreStatistics:
    """A snapshot of a ``MemoryEventStore``, taken after dropping expired events.

    Attributes:
        sessions: sessions with a record (from their first ``open_stream`` until forgotten).
        streams: streams held: open ones, and ended ones with events left.
        events: events held, priming events included.
        bytes: bytes of the messages held.
        expiry_queue: entries in the time-ordered expiry queue, including ones whose event
            went early (bound, forget); never more than twice ``events``.
    """

    sessions: int
    streams: int
    events: int
    bytes: int
    expiry_queue: int


@final
@dataclass(slots=True, eq=False)
class _Stream:
    session: _Session
    number: int
    # Invariant: messages holds the events first_seq .. next_seq - 1, oldest first, as None
    # while there are none (an idle stream costs no deque block). Events with a seq below
    # first_seq were dropped: replaying from before first_seq - 1 would skip them.
    messages: deque[bytes | None] | None = None
    first_seq: int = 0
    next_seq: int = 0
    size: int = 0  # bytes of the messages held
    ended: bool = False
    # This stream's entries in the store's expiry queue whose event went early (the bound,
    # a forget). Events go oldest first, so these are always its oldest entries there.
    dead: int = 0


@final
@dataclass(slots=True, eq=False)
class _Session:
    streams: dict[int, _Stream] = field(default_factory=dict)
    next_stream: int = 0


def _event_id(stream: int, seq: int) -> str:
    return f"s{stream}-{seq}"


def _parse_event_id(event_id: str) -> tuple[int, int] | None:
    """Return ``(stream number, seq)``, or ``None`` if ``event_id`` is not one of ours."""
    match = _EVENT_ID.fullmatch(event_id)
    if match is None:
        return None
    return int(match[1]), int(match[2])


def _stream_id(stream: int) -> str:
    return f"s{stream}"


def _parse_stream_id(stream_id: str) -> int | None:
    # ``s`` and 1-18 ASCII digits without a leading zero, checked without a regular
    # expression: this runs for every event stored.
    digits = stream_id[1:]
    if (
        stream_id[:1] == "s"
        and 0 < len(digits) <= 18
        and digits.isascii()
        and digits.isdigit()
        and (digits[0] != "0" or digits == "0")
    ):
        return int(digits)
    return None


@final
class MemoryEventStore:
    """An ``EventStore`` in this process's memory, bounded per stream and in time.

    Each stream keeps its latest ``max_events_per_stream`` events; an event is dropped once
    it is ``ttl`` seconds old (by ``trio.current_time()``, so virtual under ``MockClock``).
    Expiry is lazy: every method first drops what has expired, from one queue ordered by
    time, at O(1) per event. An ended stream goes when its last event does; an open stream
    stays, at the cost of a few small objects, until it is ended or forgotten. Messages are
    stored as given (not copied) and never parsed.

    Nothing here awaits except ``send`` in ``replay_events_after``: the other methods take
    effect before they return, without a checkpoint.
    """

    def __init__(self, *, max_events_per_stream: int = 1000, ttl: float = 300.0) -> None:
        if max_events_per_stream < 1:
            raise ValueError(f"max_events_per_stream must be >= 1, not {max_events_per_stream}")
        if not ttl > 0:
            raise ValueError(f"ttl must be > 0 seconds, not {ttl}")
        self._max_events = max_events_per_stream
        self._ttl = ttl
        self._sessions: dict[str, _Session] = {}
        # When each event was stored and in which stream, oldest first: the expiry queue, as
        # two parallel deques rather than an object per event (a flood of progress stores
        # thousands, and every object that lives on makes the garbage collector work). An
        # entry is dead once its event went early (see ``_Stream.dead``); _dead counts
        # those, and the queue is compacted whenever they are more than half of it.
        self._stored_at: deque[float] = deque()
        self._stored_in: deque[_Stream] = deque()
        self._dead = 0
        # The stream stored to last, as (session id, stream id, stream): a stream's events
        # come in runs (a burst of progress). Forgetting clears it; an ended stream is
        # refused by its ``ended`` flag like any other.
        self._recent: tuple[str, str, _Stream] | None = None

    def statistics(self) -> EventStoreStatistics:
        """Return a snapshot (see ``EventStoreStatistics``). Call it inside trio."""
        self._expire()
        streams = [
            stream for session in self._sessions.values() for stream in session.streams.values()
        ]
        return EventStoreStatistics(
            sessions=len(self._sessions),
            streams=len(streams),
            events=sum(stream.next_seq - stream.first_seq for stream in streams),
            bytes=sum(stream.size for stream in streams),
            expiry_queue=len(self._stored_at),
        )

    async def open_stream(self, session_id: str) -> str:
        """See ``EventStore.open_stream``."""
        self._expire()
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = _Session()
        number = session.next_stream
        session.next_stream += 1
        session.streams[number] = _Stream(session, number)
        return _stream_id(number)

    async def store_event(self, session_id: str, stream_id: str, message: bytes | None) -> str:
        """See ``EventStore.store_event``."""
        return self.store_event_nowait(session_id, stream_id, message)

    def store_event_nowait(self, session_id: str, stream_id: str, message: bytes | None) -> str:
        """``store_event`` without the ``async``: the HTTP layer's synchronous path.

        Not part of the ``EventStore`` protocol; a store that can take an event without
        waiting offers it (with ``end_stream_nowait``) and then saves the HTTP layer a
        schedule point per event.
        """
        now = trio.current_time()
        stored_at = self._stored_at
        if stored_at and stored_at[0] <= now - self._ttl:
            self._expire(now)
        stream = self._open_stream(session_id, stream_id)
        if stream.messages is None:
            stream.messages = deque()
        seq = stream.next_seq
        stream.next_seq += 1
        stream.messages.append(message)
        stream.size += len(message or b"")
        stored_at.append(now)
        self._stored_in.append(stream)
        if len(stream.messages) > self._max_events:
            self._drop_oldest(stream)
            stream.dead += 1
            self._dead += 1
            if self._dead * 2 > len(stored_at):
                self._compact()
        return _event_id(stream.number, seq)

    async def replay_events_after(
        self, session_id: str, last_event_id: str, send: EventSender
    ) -> str:
        """See ``EventStore.replay_events_after``."""
        self._expire()
        stream_id, events = self._events_after(session_id, last_event_id)
        for event_id, message in events:
            await send(event_id, message)
        return stream_id

    async def end_stream(self, session_id: str, stream_id: str) -> None:
        """See ``EventStore.end_stream``."""
        self.end_stream_nowait(session_id, stream_id)

    def end_stream_nowait(self, session_id: str, stream_id: str) -> None:
        """``end_stream`` without the ``async`` (see ``store_event_nowait``)."""
        self._expire()
        stream = self._find_stream(session_id, stream_id)
        if stream is not None:
            stream.ended = True
            if stream.messages is None:
                del stream.session.streams[stream.number]

    async def forget_stream(self, session_id: str, stream_id: str) -> None:
        """See ``EventStore.forget_stream``."""
        self._expire()
        stream = self._find_stream(session_id, stream_id)
        if stream is not None:
            del stream.session.streams[stream.number]
            self._clear(stream)
            self._compact_if_sparse()
        self._recent = None

    async def forget_session(self, session_id: str) -> None:
        """See ``EventStore.forget_session``."""
        self._expire()
        session = self._sessions.pop(session_id, None)
        if session is not None:
            for stream in session.streams.values():
                self._clear(stream)
            session.streams.clear()
            self._compact_if_sparse()
        self._recent = None

    def _find_stream(self, session_id: str, stream_id: str) -> _Stream | None:
        session = self._sessions.get(session_id)
        number = _parse_stream_id(stream_id)
        if session is None or number is None:
            return None
        return session.streams.get(number)

    def _open_stream(self, session_id: str, stream_id: str) -> _Stream:
        recent = self._recent
        if recent is not None and recent[1] == stream_id and recent[0] == session_id:
            stream: _Stream | None = recent[2]
        else:
            stream = self._find_stream(session_id, stream_id)
            if stream is not None:
                self._recent = (session_id, stream_id, stream)
        if stream is None or stream.ended:
            # The session id stays out of the message: it is a credential (MCP 2025-11-25).
            raise TransportClosed(
                f"SSE stream {stream_id[:64]!r} is not open in this session "
                "(ended, forgotten, or never opened)"
            )
        return stream

    def _events_after(
        self, session_id: str, last_event_id: str
    ) -> tuple[str, list[tuple[str, bytes]]]:
        """Resolve ``last_event_id`` and list the messages after it (a snapshot)."""
        parsed = _parse_event_id(last_event_id)
        session = self._sessions.get(session_id)
        if parsed is None or session is None or parsed[0] >= session.next_stream:
            raise UnknownEventId(last_event_id)
        number, seq = parsed
        stream_id = _stream_id(number)
        stream = session.streams.get(number)
        if stream is None:  # ended and expired, or forgotten
            raise EventsLost(last_event_id, stream_id)
        if seq >= stream.next_seq:
            raise UnknownEventId(last_event_id)
        if seq + 1 < stream.first_seq:
            raise EventsLost(last_event_id, stream_id)
        after = islice(stream.messages or (), seq + 1 - stream.first_seq, None)
        events = [
            (_event_id(number, event_seq), message)
            for event_seq, message in enumerate(after, seq + 1)
            if message is not None
        ]
        return stream_id, events

    def _expire(self, now: float | None = None) -> None:
        """Drop every event that is ``ttl`` seconds old or older."""
        deadline = (trio.current_time() if now is None else now) - self._ttl
        stored_at, stored_in = self._stored_at, self._stored_in
        while stored_at and stored_at[0] <= deadline:
            stored_at.popleft()
            stream = stored_in.popleft()
            if stream.dead:
                stream.dead -= 1
                self._dead -= 1
            else:
                # Per stream, the queue is in seq order, so this is the stream's oldest.
                self._drop_oldest(stream)

    def _drop_oldest(self, stream: _Stream) -> None:
        messages = stream.messages
        assert messages is not None
        stream.size -= len(messages.popleft() or b"")
        stream.first_seq += 1
        if not messages:
            stream.messages = None
            if stream.ended:
                del stream.session.streams[stream.number]

    def _clear(self, stream: _Stream) -> None:
        """Drop all of a stream's events; its expiry entries become dead."""
        held = stream.next_seq - stream.first_seq
        stream.dead += held
        self._dead += held
        stream.first_seq = stream.next_seq
        stream.messages = None
        stream.size = 0

    def _compact_if_sparse(self) -> None:
        if self._dead * 2 > len(self._stored_at):
            self._compact()

    def _compact(self) -> None:
        stored_at: deque[float] = deque()
        stored_in: deque[_Stream] = deque()
        for when, stream in zip(self._stored_at, self._stored_in, strict=True):
            if stream.dead:  # one of the stream's oldest entries, the dead ones
                stream.dead -= 1
            else:
                stored_at.append(when)
                stored_in.append(stream)
        self._stored_at, self._stored_in = stored_at, stored_in
        self._dead = 0
