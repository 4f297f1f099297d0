"""``ResponseStream``: one SSE stream of a Streamable HTTP session, and its delivery.

A session's messages reach a stream through ``HttpSessionStream`` (``_stream.py``), which
decides where each goes. Here a stream stores the message (when there is an event store),
frames it, and hands it to the response reading the stream, if one is (``LiveQueue``). A POST
stream ends after the last response it waits for; the standalone stream a GET opened never
ends that way, and a reader that does not keep up with it loses messages instead of slowing
the session (``_offer``).

Two ways in: ``deliver_nowait`` does it all without a schedule point, or does nothing and says
so; ``deliver`` may wait (for a remote store, or for a POST reader whose queue is full) and
holds the stream's lock meanwhile, so that the synchronous way never overtakes it.
"""

from __future__ import annotations

import logging
import typing
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import trio

from trimcp.http._live import LiveQueue
from trimcp.transports import encode_event

if TYPE_CHECKING:
    from collections.abc import Iterable

    from trimcp.protocol import RequestId
    from trimcp.transports import EventStore

__all__ = ["ResponseStream", "StreamOwner", "SyncEventStore"]

logger = logging.getLogger(__name__)

# Events waiting for a slow live reader before the session's writer waits for it: a reader
# slows its own session only, and never past this many messages of memory. Also the most
# events the reader finds queued at once, which then leave in one write.
_LIVE_QUEUE = 64
# Messages the standalone stream's reader may miss before it is disconnected.
_MAX_DROPPED = 256


@runtime_checkable
class SyncEventStore(Protocol):
    """The synchronous path of an event store that has one (``MemoryEventStore``)."""

    def store_event_nowait(self, session_id: str, stream_id: str, message: bytes | None) -> str:
        """``EventStore.store_event`` without a checkpoint."""
        ...

    def end_stream_nowait(self, session_id: str, stream_id: str) -> None:
        """``EventStore.end_stream`` without a checkpoint."""
        ...


class StreamOwner(Protocol):
    """The session stream a ``ResponseStream`` belongs to (``HttpSessionStream``).

    A response stream reads only these, to store its events under the owner's session:
    declaring them here, rather than importing ``_stream.py`` (which imports this module),
    keeps the two modules readable one at a time. The values must not change while the
    owner has open streams.
    """

    @property
    def session_id(self) -> str:
        """The session whose events are stored."""
        ...

    @property
    def store(self) -> EventStore | None:
        """Where events are stored for resumption; None when they are not."""
        ...

    @property
    def sync_store(self) -> SyncEventStore | None:
        """``store``, if it can store and end streams without waiting; else None."""
        ...


@typing.final
class ResponseStream:
    """One SSE stream of a session: a POST's, or the standalone one a GET opened."""

    __slots__ = ("_live", "_lock", "_owner", "_sse", "dropped", "ended", "stream_id", "waiting")

    def __init__(
        self,
        owner: StreamOwner,
        stream_id: str | None,
        waiting: Iterable[RequestId] | None,
    ) -> None:
        self._owner = owner
        self.stream_id = stream_id
        #: Requests still to be answered on this stream; None for the standalone stream.
        self.waiting: set[RequestId] | None = None if waiting is None else set(waiting)
        self.ended = False
        #: Messages a slow reader of the standalone stream missed (still in the store).
        self.dropped = 0
        # Held by an asynchronous delivery or ending; made by the first one.
        self._lock: trio.Lock | None = None
        self._live: LiveQueue | None = None
        # Whether the reader takes SSE events (or the bare messages, for a JSON body).
        self._sse = True

    @property
    def attached(self) -> bool:
        """True while an HTTP response is reading this stream."""
        return self._live is not None

    @property
    def carries_events(self) -> bool:
        """True while an SSE response reads this stream: it can carry messages besides the
        answers (a JSON answer holds only the responses)."""
        return self._live is not None and self._sse

    def attach(self, *, sse: bool = True) -> LiveQueue:
        """Start delivering to a new reader; a previous reader is cut off.

        With ``sse`` the reader gets each message as an SSE event (with its id, if it was
        stored), framed as it is delivered; otherwise the bare messages (a JSON answer).
        """
        self.detach()
        self._sse = sse
        live = LiveQueue(_LIVE_QUEUE)
        if self.ended:
            live.close(complete=True)
        else:
            self._live = live
        return live

    def detach(self) -> None:
        """The reader went away: keep collecting events (stored, if there is a store)."""
        live, self._live = self._live, None
        if live is not None:
            live.close()

    def deliver_nowait(self, data: bytes, related: RequestId | None, final: bool) -> bool:
        """Store and hand over one message now; end the stream after its last response.

        Returns False, having done nothing, where that would mean waiting: an asynchronous
        delivery holds the lock, the store has no synchronous path, or this POST stream's
        reader has a full queue. ``deliver`` does it then.
        """
        lock = self._lock
        if (lock is not None and lock.locked()) or not self._stores_now():
            return False
        if self.ended:
            return True
        waiting = self.waiting
        if data:
            live = self._live
            if live is not None and waiting is not None and live.full:
                return False
            event_id = self._store_nowait(data)
            if live is not None:
                self._hand_over(live, event_id, data)
        if final and related is not None and waiting is not None:
            waiting.discard(related)
            if not waiting:
                self._finish()
                store = self._owner.sync_store
                if store is not None and self.stream_id is not None:
                    store.end_stream_nowait(self._owner.session_id, self.stream_id)
        return True

    def _stores_now(self) -> bool:
        """Whether what this stream stores (if anything) can be stored without waiting."""
        owner = self._owner
        return self.stream_id is None or owner.store is None or owner.sync_store is not None

    def _store_nowait(self, data: bytes) -> str | None:
        store = self._owner.sync_store
        if store is None or self.stream_id is None:
            return None  # nothing is stored for this stream (see _stores_now)
        return store.store_event_nowait(self._owner.session_id, self.stream_id, data)

    async def deliver(self, data: bytes, related: RequestId | None, final: bool) -> None:
        """Store and send one message, waiting for the store and for a slow POST reader."""
        if self._lock is None:
            self._lock = trio.Lock()
        async with self._lock:
            if self.ended:
                return
            event_id: str | None = None
            store = self._owner.store
            if data and store is not None and self.stream_id is not None:
                event_id = await store.store_event(self._owner.session_id, self.stream_id, data)
            live = self._live
            if data and live is not None:
                if self.waiting is None:
                    self._offer(live, event_id, data)
                else:
                    await self._send_live(live, self._frame(event_id, data))
            if final and self.waiting is not None and related is not None:
                self.waiting.discard(related)
                if not self.waiting:
                    await self._end()

    def _frame(self, event_id: str | None, data: bytes) -> bytes:
        return encode_event(data, event_id=event_id) if self._sse else data

    def _hand_over(self, live: LiveQueue, event_id: str | None, data: bytes) -> None:
        if self.waiting is None:
            self._offer(live, event_id, data)
            return
        try:
            live.put_nowait(self._frame(event_id, data))  # not full: the caller asked
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._lost(live)

    async def _send_live(self, live: LiveQueue, event: bytes) -> None:
        """Hand an event to a POST stream's reader, waiting while its queue is full."""
        try:
            while not live.put_nowait(event):
                await live.wait_room()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            # The reader left or was cut off; the event is in the store for a resumption.
            self._lost(live)

    def _lost(self, live: LiveQueue) -> None:
        if self._live is live:
            self._live = None

    def _offer(self, live: LiveQueue, event_id: str | None, data: bytes) -> None:
        """Hand a message to the standalone stream's reader without ever waiting for it.

        The slow-consumer policy: the session must not wait for a reader that does not
        read (its requests would stall) and memory must stay bounded, so when the reader's
        queue (``_LIVE_QUEUE``) is full the message is dropped for it and counted; it is
        still in the event store, so the client can resume from its last event id. After
        ``_MAX_DROPPED`` drops the reader is disconnected, logged once.
        """
        if not live.full:
            try:
                live.put_nowait(self._frame(event_id, data))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._lost(live)
            return
        self.dropped += 1
        if self.dropped >= _MAX_DROPPED:
            logger.warning(
                "session %s: the GET stream's reader fell %d messages behind; "
                "disconnected it (it may resume with Last-Event-ID)",
                self._owner.session_id[:8],
                self.dropped,
            )
            self.detach()

    async def end(self) -> None:
        """End the stream now (the session closed)."""
        if self._lock is None:
            await self._end()
            return
        async with self._lock:
            await self._end()

    def _finish(self) -> None:
        self.ended = True
        live, self._live = self._live, None
        if live is not None:
            live.close(complete=True)  # its reader gets the whole rest of the stream

    async def _end(self) -> None:
        if self.ended:
            return
        self._finish()
        store = self._owner.store
        if store is not None and self.stream_id is not None:
            await store.end_stream(self._owner.session_id, self.stream_id)

    async def release(self) -> None:
        """Tell the store a client got this whole stream, so it need not keep it long.

        Called by the response that wrote the stream's last event (the reader of a
        ``LiveQueue`` closed ``complete``). The standalone stream is never released: it
        ends only with its session, which forgets everything anyway.
        """
        store = self._owner.store
        if store is not None and self.stream_id is not None and self.waiting is not None:
            await store.release_stream(self._owner.session_id, self.stream_id)

    async def priming_event_id(self) -> str | None:
        """Store the priming event (an id, no data) and return its id (None: no store)."""
        store = self._owner.store
        if store is None or self.stream_id is None:
            return None
        return await store.store_event(self._owner.session_id, self.stream_id, None)
