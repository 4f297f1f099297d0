"""An in-memory ``MessageStream`` pair: whole messages through bounded trio memory channels.

For tests and for ``trimcp.testing``'s in-memory client: a session served over one end
behaves as over a real transport (same size limit, same close semantics) but no bytes are
framed and no file descriptors are involved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

import trio

from trimcp.errors import MessageTooLarge, TransportBroken, TransportClosed

from ._stdio import DEFAULT_MAX_MESSAGE_SIZE

if TYPE_CHECKING:
    from collections.abc import Sequence

# Messages in flight per direction before send waits: the actor mailbox default
# (``Actor.mailbox_size``), so a test sees backpressure at the same depth as the runtime.
DEFAULT_CAPACITY = 64


@final
class MemoryMessageStream(trio.abc.AsyncResource):
    """One end of a ``memory_stream_pair``; build it with that function.

    ``send_message`` waits while the peer has ``capacity`` messages unread (backpressure,
    like a full pipe). Sizes are checked on the receiving side: a message over
    ``max_message_size`` is consumed and raises ``MessageTooLarge``, and the stream stays
    usable. After the peer's ``aclose``, ``receive_message`` returns what was already sent
    and then raises ``TransportClosed``; ``send_message`` raises ``TransportBroken``.
    After this end's ``aclose`` both directions raise ``TransportClosed``.
    """

    def __init__(
        self,
        send_channel: trio.MemorySendChannel[bytes],
        receive_channel: trio.MemoryReceiveChannel[bytes],
        max_message_size: int,
    ) -> None:
        self._send_channel = send_channel
        self._receive_channel = receive_channel
        self._max_message_size = max_message_size

    async def receive_message(self) -> bytes:
        """Return the next message the peer sent, waiting for one.

        Raises:
            TransportClosed: the peer closed and everything it sent was received, or this
                end was closed.
            MessageTooLarge: the next message was over the limit and has been dropped.
        """
        try:
            message = await self._receive_channel.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise TransportClosed("the in-memory stream is closed") from None
        if len(message) > self._max_message_size:
            raise MessageTooLarge(len(message), self._max_message_size)
        return message

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return the messages already queued by the peer, without waiting."""
        ready: list[bytes | MessageTooLarge] = []
        while True:
            try:
                message = self._receive_channel.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                return ready
            if len(message) > self._max_message_size:
                ready.append(MessageTooLarge(len(message), self._max_message_size))
            else:
                ready.append(message)

    async def send_message(self, data: bytes) -> None:
        """Send one message, waiting while the peer's queue is full.

        Raises:
            TransportClosed: this end was closed.
            TransportBroken: the peer closed its end.
        """
        try:
            await self._send_channel.send(bytes(data))
        except trio.ClosedResourceError:
            raise TransportClosed("the in-memory stream is closed") from None
        except trio.BrokenResourceError:
            raise TransportBroken("the peer closed the in-memory stream") from None

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """Send several messages in order; if cancelled, a prefix of them may have been sent.

        Raises:
            TransportClosed: this end was closed.
            TransportBroken: the peer closed its end.
        """
        for message in messages:
            await self.send_message(message)

    async def aclose(self) -> None:
        """Close this end: the peer drains what was sent, then sees ``TransportClosed``."""
        self._send_channel.close()
        self._receive_channel.close()
        await trio.lowlevel.checkpoint()


def memory_stream_pair(
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    capacity: float = DEFAULT_CAPACITY,
) -> tuple[MemoryMessageStream, MemoryMessageStream]:
    """Return two connected ``MemoryMessageStream`` ends.

    Each direction is a trio memory channel holding up to ``capacity`` messages
    (``math.inf`` for unbounded, 0 for a rendezvous); a sender waits while it is full.
    ``max_message_size`` applies to messages received on either end.
    """
    if max_message_size < 1:
        raise ValueError(f"max_message_size must be >= 1, not {max_message_size}")
    left_send, right_receive = trio.open_memory_channel[bytes](capacity)
    right_send, left_receive = trio.open_memory_channel[bytes](capacity)
    return (
        MemoryMessageStream(left_send, left_receive, max_message_size),
        MemoryMessageStream(right_send, right_receive, max_message_size),
    )
