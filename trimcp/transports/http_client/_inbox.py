"""``Inbox``: what the HTTP client's background tasks received, for ``receive_message``.

Over HTTP, messages arrive on many connections at once (each POST's answer, the GET stream,
resumptions), each read by its own task. They meet here, in arrival order, behind a bounded
channel so a reader that falls behind slows the connections down instead of growing memory.

Failures that a ``MessageStream`` reports from ``receive_message`` travel in the same queue
so they keep their place among the messages: ``MessageTooLarge`` (that message was dropped),
``SessionExpired`` (the session above starts a new one; the stream goes on), and a final
``TransportClosed`` / ``TransportBroken``, after which every call raises it again.

A ``SessionExpired`` is dropped if a new ``initialize`` went out after it was queued
(``new_epoch``): the session above already started over, maybe because ``send_message``
raised the same expiry, and must not start over twice.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TypeAlias, final

import trio

from trimcp.errors import MessageTooLarge, SessionExpired, TransportBroken, TransportClosed

__all__ = ["Inbound", "Inbox"]

Inbound: TypeAlias = bytes | MessageTooLarge | TransportClosed | TransportBroken


@final
@dataclass(frozen=True, slots=True)
class _Expiry:
    """A queued ``SessionExpired`` and the epoch (initialize count) it belongs to."""

    error: SessionExpired
    epoch: int


_Queued: TypeAlias = Inbound | _Expiry

# Messages waiting for the session's reader before the connections are made to wait; a
# progress flood fills it only if the reader stalls.
_CAPACITY = 256


@final
class Inbox:
    """The queue between the connections' tasks and the one reader (module docstring)."""

    def __init__(self) -> None:
        self._send, self._receive = trio.open_memory_channel[_Queued](_CAPACITY)
        # An error taken out by receive_ready, which returns messages only: the next get.
        self._held: _Queued | None = None
        self._epoch = 0
        self._ended: TransportClosed | TransportBroken | None = None

    async def put(self, item: Inbound) -> None:
        """Queue ``item``, waiting while the queue is full; dropped once the inbox is closed."""
        with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
            await self._send.send(
                _Expiry(item, self._epoch) if isinstance(item, SessionExpired) else item
            )

    def new_epoch(self) -> None:
        """A new ``initialize`` is going out: expiries queued so far are stale."""
        self._epoch += 1

    async def get(self) -> bytes:
        """Return the next message, or raise the next error in the queue.

        Raises:
            MessageTooLarge: a message was dropped; the stream goes on.
            SessionExpired: the server forgot the session; the stream goes on.
            TransportClosed: this side closed the stream, or the server ended it cleanly.
            TransportBroken: the connection to the server is lost for good.
        """
        while True:
            if self._ended is not None:
                raise self._ended
            item = self._held
            self._held = None
            if item is None:
                try:
                    item = await self._receive.receive()
                except (trio.ClosedResourceError, trio.EndOfChannel):
                    self._ended = TransportClosed("the HTTP client stream is closed")
                    raise self._ended from None
            if isinstance(item, bytes):
                return item
            if isinstance(item, _Expiry):
                if item.epoch == self._epoch:
                    raise item.error
                continue
            if isinstance(item, TransportClosed | TransportBroken):
                self._ended = item
            raise item

    def ready(self) -> list[bytes | MessageTooLarge]:
        """Return the messages queued now, without waiting; stop before any other error."""
        if self._held is not None or self._ended is not None:
            return []
        taken: list[bytes | MessageTooLarge] = []
        while True:
            try:
                item = self._receive.receive_nowait()
            except (trio.WouldBlock, trio.ClosedResourceError, trio.EndOfChannel):
                return taken
            if isinstance(item, bytes | MessageTooLarge):
                taken.append(item)
            else:
                self._held = item
                return taken

    def close(self) -> None:
        """Close the queue: a waiting ``get`` and every later one raise ``TransportClosed``."""
        if self._ended is None:
            self._ended = TransportClosed("the HTTP client stream is closed")
        self._receive.close()
