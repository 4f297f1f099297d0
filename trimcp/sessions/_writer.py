"""A session's outgoing side: messages queued, batched and written, with no writer task.

Every message a session sends is *routed* (``trimcp.transports.Routed``): it carries the
client request it belongs to and whether it is that request's response. The session knows
both when it encodes the message, so a transport that delivers per request (Streamable HTTP
puts a request's progress and response on the SSE stream of the POST that carried it) need
not read them back out of the bytes. Other transports get the bytes alone.

There is no writer task. A task that writes while the stream is idle writes itself, taking
along whatever others queued meanwhile; while another task is writing, the message is queued
for it and the caller returns at once (waiting only while ``write_queue`` messages are
already queued). A stream that can take messages without waiting (``ImmediateOutput`` on
stdio, ``RoutedOutput`` on HTTP) is written to synchronously, so a write is often no
schedule point at all; what it cannot take now goes out in a shielded flush, bounded by
``write_timeout``.

Not here: what the messages mean (the session and its protocol core) or how they are framed
(the stream).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol, TypeVarTuple, Unpack, final

import trio

from trimcp.errors import TransportBroken, TransportClosed
from trimcp.transports import ImmediateOutput, RoutedOutput

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from trimcp.protocol import RequestId
    from trimcp.transports import MessageStream, Routed

    from ._options import SessionOptions

__all__ = ["SessionWriter", "WriterOwner"]

logger = logging.getLogger(__name__)

Ts = TypeVarTuple("Ts")

# Most messages ready at one moment that go out in one write.
_WRITE_BATCH = 256


class WriterOwner(Protocol):
    """What the writer needs from its session."""

    @property
    def name(self) -> str:
        """The session's name, for logs."""
        ...

    def start_soon(self, fn: Callable[[Unpack[Ts]], Awaitable[object]], *args: *Ts) -> None:
        """Run ``fn(*args)`` as a helper task of the session."""
        ...

    def output_ended(self) -> None:
        """The stream takes nothing more: the session stops."""
        ...


def _payloads(batch: Sequence[Routed]) -> list[bytes]:
    return [data for data, _, _ in batch if data]


@final
class SessionWriter:
    """The queue of one session's outgoing messages (see the module docstring)."""

    __slots__ = (
        "_closed",
        "_flushing",
        "_idle",
        "_limit",
        "_now",
        "_owner",
        "_pending",
        "_room",
        "_routed",
        "_stream",
        "_timeout",
    )

    def __init__(self, stream: MessageStream, options: SessionOptions, owner: WriterOwner) -> None:
        self._stream = stream
        self._owner = owner
        self._limit = options.write_queue
        self._timeout = options.write_timeout
        # Routed streams get the routes; the others get the bytes (and no ``b""``).
        self._routed = stream if isinstance(stream, RoutedOutput) else None
        # A plain stream that can write without waiting (stdio).
        self._now = stream if isinstance(stream, ImmediateOutput) else None
        # Encoded messages waiting for the stream, oldest first.
        self._pending: list[Routed] = []
        self._flushing = False
        self._closed = False
        # Made by waiters only, and dropped once set: an idle session keeps no events.
        # ``_room`` wakes writers waiting for a full queue; ``_idle`` the close waiting for
        # a flush to end.
        self._room: trio.Event | None = None
        self._idle: trio.Event | None = None

    @property
    def closed(self) -> bool:
        """True once the writer refuses messages (closing, or the output ended)."""
        return self._closed

    def _wanted(self, message: Routed) -> bool:
        # b"" is nothing to send, except that a routed stream learns from a final one that
        # no response will come.
        return bool(message[0]) or (message[2] and self._routed is not None)

    def write_now(self, data: bytes, related: RequestId | None, final: bool) -> bool:
        """Write one message if a routed stream takes it at once; False: nothing was done.

        The common case of a routed stream (a handler's progress, say), without a queue, a
        batch or an ``await``. Nothing may be queued or flushing: order is kept.
        """
        routed = self._routed
        if routed is None or self._pending or self._flushing or self._closed:
            return False
        if not data and not final:
            return True
        try:
            return routed.send_one_now(data, related, final)
        except (TransportClosed, TransportBroken) as exc:
            self._output_ended(exc)
            return True

    async def write(self, message: Routed) -> bool:
        """Send one message; return False if it was dropped (the session is closing).

        Not always a schedule point (see the module docstring). A write that must wait is
        shielded: cancelling the task that happens to be flushing must not cut a message in
        half; closing the stream ends a write that is stuck.
        """
        if not self._wanted(message):
            return True
        while len(self._pending) >= self._limit and not self._closed:
            if self._flushing:
                if self._room is None:
                    self._room = trio.Event()
                await self._room.wait()
            else:  # the reader queued these and has not flushed yet
                await self._flush_pending()
        if self._closed:
            name = self._owner.name
            logger.debug("session %s is closing; dropped %d bytes", name, len(message[0]))
            return False
        self._pending.append(message)
        if not self._flushing and not self._write_now():
            self._flushing = True
            await self._flush_started()
        return True

    def queue(self, message: Routed) -> bool:
        """Queue a message for the next flush without waiting; False if the queue is full."""
        if len(self._pending) < self._limit and not self._closed:
            if self._wanted(message):
                self._pending.append(message)
            return True
        return False

    async def write_later(self, message: Routed, *, request: bool = False) -> None:
        """Queue a message from the reader's batch; ``flush_soon`` sends it with the rest.

        With the queue full, a reply (``request``) is handed to a task of its own, as if
        its request had run in one, so the reader keeps reading; anything else waits here.
        """
        if self.queue(message):
            return
        if request:
            self._owner.start_soon(self.write, message)
        else:
            await self.write(message)

    def write_soon(self, message: Routed) -> None:
        """Send a message without waiting here: queued and flushed, or by a task if full."""
        if self.queue(message):
            self.flush_soon()
        else:
            self._owner.start_soon(self.write, message)

    def flush_soon(self) -> None:
        """Write what is queued now, or start a task to: the caller never waits to write."""
        if self._pending and not self._flushing and not self._write_now():
            self._flushing = True
            self._owner.start_soon(self._flush_started)

    async def close(self) -> None:
        """Finish writing what is queued, then refuse more.

        Replies already encoded still go out (a request answered just before the stop
        queues its reply behind another task's write); the caller bounds the wait.
        """
        while self._flushing:
            if self._idle is None:
                self._idle = trio.Event()
            await self._idle.wait()
        if self._pending and not self._closed:
            await self._flush_pending()
        self._closed = True
        self._wake_writers()

    def _wake_writers(self) -> None:
        room, self._room = self._room, None
        if room is not None:
            room.set()

    async def _flush_pending(self) -> None:
        """Write what is queued, in this task; no other task may be flushing."""
        if self._write_now():
            return
        self._flushing = True
        await self._flush_started()

    def _write_now(self) -> bool:
        """Write what is queued without waiting; return False if some of it must wait.

        What the stream could not take stays with it and goes first in the next ``_flush``.
        Also True when the output has ended.
        """
        try:
            if self._routed is not None:
                done = self._routed.send_routed_now(self._take_batch())
            elif self._now is not None:
                done = self._now.send_messages_now(_payloads(self._take_batch()))
            else:
                return False
        except (TransportClosed, TransportBroken) as exc:
            self._output_ended(exc)
            return True
        return done and not self._pending

    async def _flush_started(self) -> None:
        """Finish the flush begun by setting ``_flushing``; shielded (see ``write``)."""
        try:
            with trio.CancelScope(shield=True):
                await self._flush()
        finally:
            self._flushing = False
            idle, self._idle = self._idle, None
            if idle is not None:
                idle.set()

    def _take_batch(self) -> list[Routed]:
        """Take the next batch off the queue, waking writers if it was full."""
        pending = self._pending
        if len(pending) >= self._limit:
            self._wake_writers()  # writers wait only for a full queue (see ``write``)
        if len(pending) <= _WRITE_BATCH:
            self._pending = []
            return pending
        self._pending = pending[_WRITE_BATCH:]
        return pending[:_WRITE_BATCH]

    async def _send(self, batch: list[Routed]) -> None:
        # An empty batch still sends what the stream kept back from a ``*_now`` call.
        if self._routed is not None:
            await self._routed.send_routed(batch)
        else:
            await self._stream.send_messages(_payloads(batch))

    async def _flush(self) -> None:
        timeout = self._timeout
        while True:
            try:
                # Bounded even though the flush is shielded: a peer that stops reading
                # must not keep the session (and its supervisor's shutdown) waiting forever.
                with trio.move_on_after(timeout) as stuck:
                    await self._send(self._take_batch())
                if stuck.cancelled_caught:
                    logger.warning(
                        "session %s: the client took nothing for %g s; closing the session",
                        self._owner.name,
                        timeout,
                    )
                    raise TransportBroken(f"the client read nothing for {timeout:g} s")
            except (TransportClosed, TransportBroken) as exc:
                self._output_ended(exc)
                return
            if not self._pending:
                return

    def _output_ended(self, exc: TransportClosed | TransportBroken) -> None:
        logger.debug("session %s: output ended (%r)", self._owner.name, exc)
        self._closed = True
        self._pending.clear()
        self._wake_writers()
        self._owner.output_ended()
