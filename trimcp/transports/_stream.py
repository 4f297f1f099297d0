"""``MessageStream``: the seam between a transport's framing and the session above it.

A transport turns bytes into one whole JSON-RPC message at a time (a stdio line, an HTTP
body, a WebSocket text frame) and back; it never looks inside the message. Sessions are
written against this protocol only, so every transport serves the same Session actor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.errors import MessageTooLarge


class MessageStream(Protocol):
    """A bidirectional stream of framed messages.

    Implementations guarantee:

    * ``receive_message`` returns exactly one message's bytes, without the framing (no
      trailing newline; a CRLF line ending is tolerated and stripped). At a clean end of input
      (EOF, peer closed) it raises ``TransportClosed``; on a broken connection,
      ``TransportBroken``. A message over the size limit raises ``MessageTooLarge`` *after*
      the stream has discarded it, and the next call returns the following message: an
      oversized message never costs more memory than the limit and never ends the stream.
      (WebSocket is the exception: RFC 6455 ends the connection with 1009, so there the
      error is raised once and the stream is then broken.)
    * ``send_message`` writes one message with its framing; ``send_messages`` writes several
      in order, in as few writes as the transport allows (the session batches replies that
      are ready together). Only one task sends at a time (the session's writer); receiving
      and sending may run concurrently in two tasks.
    * ``aclose`` is idempotent; afterwards both directions raise ``TransportClosed``.
    """

    async def receive_message(self) -> bytes:
        """Return the next whole message (see the class docstring for the errors)."""
        ...

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return the messages already received and framed, without waiting (maybe none).

        An oversized message in that run appears as its ``MessageTooLarge`` error, in order.
        Lets a reader hand a whole read's worth of messages on at once instead of one per
        scheduling round.
        """
        ...

    async def send_message(self, data: bytes) -> None:
        """Write one message and its framing."""
        ...

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """Write several messages, in order, with as few writes as possible."""
        ...

    async def aclose(self) -> None:
        """Close both directions; idempotent."""
        ...
