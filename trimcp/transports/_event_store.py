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
events expire; ``release_stream`` once a client got all of it (its resumption window was
that delivery: the store may drop it soon); ``forget_stream`` / ``forget_session`` to drop
things at once. A session id is not reused, so a session forgotten and then used again
simply starts afresh.

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
            EventsLost: the id was issued, but events after it are no longer stored (a
                bound of the store, the time to live, or the stream was released or
                forgotten).
        """
        ...

    async def end_stream(self, session_id: str, stream_id: str) -> None:
        """Mark a stream complete: it takes no more events and goes once they expire.

        Its stored events stay replayable until then. Unknown streams are ignored.
        """
        ...

    async def release_stream(self, session_id: str, stream_id: str) -> None:
        """Say that a client got every event of the stream, its last one included.

        The stream takes no more events (as after ``end_stream``), and the store may drop
        it soon: a client that has the response does not resume. Keeping it a little
        longer covers a connection that broke after the last write left the server and
        before the client read it. Unknown streams are ignored.
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
        footprint: the store's estimate of the memory its events take (messages, their
            bookkeeping, the streams holding them, released streams waiting to go): what
            ``max_bytes`` bounds.
        expiry_queue: entries in the time-ordered expiry queue, including ones whose event
            went early (bound, forget); never more than twice ``events``.
        released: released streams waiting for their short grace to end.
    """

    sessions: int
    streams: int
    events: int
    bytes: int
    footprint: int
    expiry_queue: int
    released: int


# What the footprint charges, a little above what tracemalloc counts on 64-bit CPython 3.11
# (10,000 streams of a priming event and a 109-byte answer: 484 bytes each, charged 525; a
# flood of such answers on one stream: 191 bytes an event, charged 205; a release: 40,
# charged 48). Per event, beyond its message's length: its bytes object's header, its slot
# in the stream, its expiry-queue entry (a float and two slots); per stream holding events:
# the ``_Stream``, its list and its entry in the session's dict; per released stream: its
# entry in the release queue.
_EVENT_COST = 96
_STREAM_COST = 224
_RELEASED_COST = 48
#: The default of ``MemoryEventStore(max_bytes=...)`` (and of ``HttpOptions``).
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
#: The default of ``MemoryEventStore(delivered_ttl=...)``: several times a client's
#: ``retry`` wait (1 s by default), so a client whose connection broke right after the last
#: write still finds the stream when it reconnects.
DEFAULT_DELIVERED_TTL = 5.0


@final
@dataclass(slots=True, eq=False)
class _Stream:
    session: _Session
    number: int
    # Invariant: messages[head:] holds the events first_seq .. next_seq - 1, oldest first,
    # and messages is None while there are none. A list and an offset, not a deque: most
    # streams hold two events (the priming one and the answer), for which a list takes ~100
    # bytes and a deque 760. Events with a seq below first_seq were dropped: replaying from
    # before first_seq - 1 would skip them.
    messages: list[bytes | None] | None = None
    head: int = 0
    first_seq: int = 0
    next_seq: int = 0
    size: int = 0  # bytes of the messages held
    ended: bool = False
    released: bool = False
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
    """An ``EventStore`` in this process's memory, bounded in bytes, per stream and in time.

    Bounds, each checked as events come in:

    * ``max_bytes`` across all sessions, counted as ``statistics().footprint`` (the
      messages and an estimate of what holding them costs). Past it, released streams go
      first (their clients have them), oldest release first, then the oldest events of
      any stream, in the order they were stored. So the streams stored to longest ago lose
      their events first; resuming one then gets ``EventsLost``. A message larger than the
      whole bound is not kept at all.
    * ``max_events_per_stream``: each stream keeps its latest events.
    * ``ttl``: an event is dropped once it is that many seconds old.
    * ``delivered_ttl``: a released stream (``release_stream``) goes that many seconds
      after its release.

    Time is ``trio.current_time()``, so virtual under ``MockClock``. Expiry is lazy: every
    method first drops what has expired, from queues ordered by time, at O(1) per event. An
    ended stream goes when its last event does; an open stream stays, at the cost of a few
    small objects, until it is ended or forgotten. Messages are never parsed; each is kept
    as a right-sized copy (see ``store_event_nowait``).

    Nothing here awaits except ``send`` in ``replay_events_after``: the other methods take
    effect before they return, without a checkpoint.
    """

    def __init__(
        self,
        *,
        max_events_per_stream: int = 1000,
        ttl: float = 300.0,
        max_bytes: int = DEFAULT_MAX_BYTES,
        delivered_ttl: float = DEFAULT_DELIVERED_TTL,
    ) -> None:
        if max_events_per_stream < 1:
            raise ValueError(f"max_events_per_stream must be >= 1, not {max_events_per_stream}")
        if not ttl > 0:
            raise ValueError(f"ttl must be > 0 seconds, not {ttl}")
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be >= 1, not {max_bytes}")
        if not delivered_ttl >= 0:
            raise ValueError(f"delivered_ttl must be >= 0 seconds, not {delivered_ttl}")
        self._max_events = max_events_per_stream
        self._ttl = ttl
        self._max_bytes = max_bytes
        self._delivered_ttl = delivered_ttl
        self._sessions: dict[str, _Session] = {}
        # When each event was stored and in which stream, oldest first: the expiry queue, as
        # two parallel deques rather than an object per event (a flood of progress stores
        # thousands, and every object that lives on makes the garbage collector work). An
        # entry is dead once its event went early (see ``_Stream.dead``); _dead counts
        # those, and the queue is compacted whenever they are more than half of it.
        self._stored_at: deque[float] = deque()
        self._stored_in: deque[_Stream] = deque()
        self._dead = 0
        # When each released stream was released, oldest first (the release queue). A
        # stream forgotten meanwhile stays here until its turn, and is then skipped.
        self._released_at: deque[float] = deque()
        self._released_in: deque[_Stream] = deque()
        # What max_bytes bounds (see EventStoreStatistics.footprint), kept up to date.
        self._footprint = 0
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
            footprint=self._footprint,
            expiry_queue=len(self._stored_at),
            released=len(self._released_at),
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

        The message is kept as a copy: the bytes objects orjson (3.12 and later) returns
        keep their over-allocated buffer, 4 KiB for a 100-byte answer, and the store is
        where they would otherwise live on. A copy costs ~0.2 µs.
        """
        now = trio.current_time()
        if self._expired(now):
            self._expire(now)
        stream = self._open_stream(session_id, stream_id)
        messages = stream.messages
        cost = _EVENT_COST
        if messages is None:
            messages = stream.messages = []
            cost += _STREAM_COST
        if message is not None:
            # Two parts, so join builds a new object (one part would come back as is).
            message = b"".join((message, b""))
            stream.size += len(message)
            cost += len(message)
        seq = stream.next_seq
        stream.next_seq += 1
        messages.append(message)
        self._stored_at.append(now)
        self._stored_in.append(stream)
        self._footprint += cost
        if seq - stream.first_seq >= self._max_events:
            self._drop_oldest(stream)
            stream.dead += 1
            self._dead += 1
            self._compact_if_sparse()
        if self._footprint > self._max_bytes:
            self._evict()
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

    async def release_stream(self, session_id: str, stream_id: str) -> None:
        """See ``EventStore.release_stream``: the stream goes ``delivered_ttl`` from now."""
        now = trio.current_time()
        self._expire(now)
        stream = self._find_stream(session_id, stream_id)
        if stream is None or stream.released:
            return
        stream.ended = stream.released = True
        if stream.messages is None:
            del stream.session.streams[stream.number]
            return
        self._released_at.append(now)
        self._released_in.append(stream)
        self._footprint += _RELEASED_COST
        if self._footprint > self._max_bytes:
            self._evict()

    async def forget_stream(self, session_id: str, stream_id: str) -> None:
        """See ``EventStore.forget_stream``."""
        self._expire()
        stream = self._find_stream(session_id, stream_id)
        if stream is not None:
            self._forget(stream)
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
        if stream is None:  # ended and expired, released, evicted or forgotten
            raise EventsLost(last_event_id, stream_id)
        if seq >= stream.next_seq:
            raise UnknownEventId(last_event_id)
        if seq + 1 < stream.first_seq:
            raise EventsLost(last_event_id, stream_id)
        start = stream.head + seq + 1 - stream.first_seq
        after = islice(stream.messages or (), start, None)
        events = [
            (_event_id(number, event_seq), message)
            for event_seq, message in enumerate(after, seq + 1)
            if message is not None
        ]
        return stream_id, events

    def _expired(self, now: float) -> bool:
        """Whether the oldest event or release is due (the cheap test before ``_expire``)."""
        stored_at, released_at = self._stored_at, self._released_at
        return bool(
            (stored_at and stored_at[0] <= now - self._ttl)
            or (released_at and released_at[0] <= now - self._delivered_ttl)
        )

    def _expire(self, now: float | None = None) -> None:
        """Drop every event ``ttl`` seconds old, and every stream released long enough ago."""
        now = trio.current_time() if now is None else now
        deadline, released_at = now - self._delivered_ttl, self._released_at
        forgot = bool(released_at and released_at[0] <= deadline)
        while released_at and released_at[0] <= deadline:
            self._pop_released()
        deadline, stored_at = now - self._ttl, self._stored_at
        while stored_at and stored_at[0] <= deadline:
            self._pop_stored()
        if forgot:
            self._compact_if_sparse()

    def _evict(self) -> None:
        """Drop released streams, then the oldest events, until the footprint fits."""
        released_at, stored_at = self._released_at, self._stored_at
        while self._footprint > self._max_bytes and released_at:
            self._pop_released()
        while self._footprint > self._max_bytes and stored_at:
            self._pop_stored()
        self._compact_if_sparse()

    def _pop_stored(self) -> None:
        """Drop the oldest entry of the expiry queue, and its event if it is still held."""
        self._stored_at.popleft()
        stream = self._stored_in.popleft()
        if stream.dead:
            stream.dead -= 1
            self._dead -= 1
        else:
            # Per stream, the queue is in seq order, so this is the stream's oldest.
            self._drop_oldest(stream)

    def _pop_released(self) -> None:
        """Forget the stream released longest ago (unless it went already)."""
        self._released_at.popleft()
        self._footprint -= _RELEASED_COST
        self._forget(self._released_in.popleft())

    def _forget(self, stream: _Stream) -> None:
        streams = stream.session.streams
        if streams.get(stream.number) is stream:
            del streams[stream.number]
            self._clear(stream)

    def _drop_oldest(self, stream: _Stream) -> None:
        messages = stream.messages
        assert messages is not None
        head = stream.head
        dropped = messages[head]
        messages[head] = None  # free the message now; nothing reads before head
        head += 1
        stream.first_seq += 1
        size = len(dropped or b"")
        stream.size -= size
        self._footprint -= size + _EVENT_COST
        if head == len(messages):
            stream.messages = None
            stream.head = 0
            self._footprint -= _STREAM_COST
            if stream.ended:
                del stream.session.streams[stream.number]
        elif head * 2 >= len(messages):
            # Move the live half down: amortized O(1) per dropped event.
            del messages[:head]
            stream.head = 0
        else:
            stream.head = head

    def _clear(self, stream: _Stream) -> None:
        """Drop all of a stream's events; its expiry entries become dead."""
        held = stream.next_seq - stream.first_seq
        stream.dead += held
        self._dead += held
        if stream.messages is not None:
            self._footprint -= stream.size + held * _EVENT_COST + _STREAM_COST
        stream.first_seq = stream.next_seq
        stream.messages = None
        stream.head = 0
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
