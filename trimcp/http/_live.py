"""``LiveQueue``: the events on their way from a session to the response reading them.

One producer (the session's writer, delivering on a ``ResponseStream``) and one reader (the
HTTP response task). Not a trio memory channel because the producer's fast path must be
synchronous and cheap: it asks ``full`` before storing an event (a memory channel can only
say so through a ``statistics()`` snapshot, an object per event), and a slow POST reader
makes it wait (``wait_room``) while a slow GET reader only makes it drop (the standalone
stream's policy, in ``_response.py``). The reader takes everything queued in one call
(``take_ready``), so a burst of progress leaves in one write. Events travel as the bytes
the reader sends (SSE-framed for an SSE reader), one object each.

Closing mirrors a memory channel's two ends: ``close`` (the producer: no more events; the
reader still gets what is queued, then ``None``), ``abandon`` (the reader went away; the
producer's next ``put_nowait`` or ``wait_room`` raises ``trio.BrokenResourceError``). The
producer closes with ``complete=True`` when its stream has ended: a reader that took
everything then has the whole stream, and may say so (the event store drops a stream its
client has).
"""

from __future__ import annotations

import typing
from collections import deque

import outcome
import trio

__all__ = ["LiveQueue"]


@typing.final
class LiveQueue:
    """A bounded queue of SSE events with one producer and one reader (module docstring)."""

    __slots__ = ("_capacity", "_closed", "_complete", "_events", "_gone", "_reader", "_writer")

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._events: deque[bytes] = deque()
        self._closed = False
        self._complete = False
        self._gone = False
        # The reader parked in ``get`` and the producer parked in ``wait_room``, if any.
        self._reader: trio.lowlevel.Task | None = None
        self._writer: trio.lowlevel.Task | None = None

    def __len__(self) -> int:
        return len(self._events)

    @property
    def full(self) -> bool:
        """Whether ``put_nowait`` would refuse an event now."""
        return len(self._events) >= self._capacity

    @property
    def abandoned(self) -> bool:
        """Whether the reader went away (``abandon``)."""
        return self._gone

    @property
    def finished(self) -> bool:
        """Whether the producer closed the queue and the reader has taken everything."""
        return self._closed and not self._events

    @property
    def complete(self) -> bool:
        """Whether the producer closed the queue because its stream ended (``close``)."""
        return self._complete

    # --- the producer's side ------------------------------------------------------------------

    def put_nowait(self, event: bytes) -> bool:
        """Queue an event; False (nothing queued) if the queue is full.

        Raises:
            trio.BrokenResourceError: the reader went away.
            trio.ClosedResourceError: the producer closed the queue.
        """
        if self._gone:
            raise trio.BrokenResourceError
        if self._closed:
            raise trio.ClosedResourceError
        if len(self._events) >= self._capacity:
            return False
        self._events.append(event)
        reader = self._reader
        if reader is not None:
            self._reader = None
            trio.lowlevel.reschedule(reader, outcome.Value(None))
        return True

    async def wait_room(self) -> None:
        """Wait until an event fits, the queue closes or the reader goes away; a checkpoint.

        Raises:
            trio.BrokenResourceError: the reader went away (before or while waiting).
        """
        if self._gone:
            await trio.lowlevel.checkpoint()
            raise trio.BrokenResourceError
        if self._closed or not self.full:
            await trio.lowlevel.checkpoint()
            return
        self._writer = trio.lowlevel.current_task()
        await trio.lowlevel.wait_task_rescheduled(self._abort_writer)
        if self._gone:
            raise trio.BrokenResourceError

    def close(self, *, complete: bool = False) -> None:
        """No more events: the reader gets what is queued, then ``None``. Idempotent.

        ``complete``: the stream itself ended, so what was queued is all of it (rather
        than this reader being cut off). The first ``close`` decides. A producer waiting in
        ``wait_room`` returns; its ``put_nowait`` then raises.
        """
        if not self._closed:
            self._complete = complete
        self._closed = True
        self._wake_reader()
        self._wake_writer()

    # --- the reader's side --------------------------------------------------------------------

    async def get(self) -> bytes | None:
        """Return the next event, waiting for one; None once the queue is finished.

        Raises:
            trio.ClosedResourceError: this reader abandoned the queue.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if self._gone:
            raise trio.ClosedResourceError
        if not self._events and not self._closed:
            self._reader = trio.lowlevel.current_task()
            await trio.lowlevel.wait_task_rescheduled(self._abort_reader)
        else:
            await trio.lowlevel.cancel_shielded_checkpoint()
        if not self._events:
            return None  # closed
        event = self._events.popleft()
        self._wake_writer()
        return event

    def take_ready(self, limit: int) -> list[bytes]:
        """Take up to ``limit`` events already queued, without waiting."""
        events = self._events
        if len(events) <= limit:
            taken = list(events)
            events.clear()
        else:
            taken = [events.popleft() for _ in range(limit)]
        if taken:
            self._wake_writer()
        return taken

    def abandon(self) -> None:
        """The reader goes away: drop what is queued, fail the producer's next call."""
        self._gone = True
        self._events.clear()
        self._wake_writer()

    # --- parking ------------------------------------------------------------------------------

    def _wake_reader(self) -> None:
        reader = self._reader
        if reader is not None:
            self._reader = None
            trio.lowlevel.reschedule(reader, outcome.Value(None))

    def _wake_writer(self) -> None:
        writer = self._writer
        if writer is not None and (self._gone or self._closed or not self.full):
            self._writer = None
            trio.lowlevel.reschedule(writer, outcome.Value(None))

    def _abort_reader(self, _: object) -> trio.lowlevel.Abort:
        self._reader = None
        return trio.lowlevel.Abort.SUCCEEDED

    def _abort_writer(self, _: object) -> trio.lowlevel.Abort:
        self._writer = None
        return trio.lowlevel.Abort.SUCCEEDED
