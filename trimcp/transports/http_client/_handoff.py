"""``Handoff``: what the sender of one POST may wait for, set by the POST's own task.

Three moments of a POST, in order: it got a slot (a request in flight, ``HttpLink.slots``),
its request was written to the connection (``sent``), its HTTP status arrived (``done``).
The sender (``HttpClientStream.send_message``) waits for as many of them as keep messages in
order without waiting for any answer; the task never waits for the sender. A failure found
while the sender still waits is handed to it (``error``), else the task reports it itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

import trio

if TYPE_CHECKING:
    from trimcp.errors import TransportBroken

__all__ = ["Handoff"]


@final
class Handoff:
    """The state of one POST shared by its sender and its task (module docstring)."""

    def __init__(self) -> None:
        # The request is on the wire (or will never be): a later POST cannot overtake it.
        self.sent = trio.Event()
        # The status arrived (or the POST failed first): ``error`` says which.
        self.done = trio.Event()
        self.error: TransportBroken | None = None
        # The sender stopped waiting: failures go to the inbox instead.
        self.detached = False
        # The POST (a request) holds one of ``HttpLink.slots``: given when it was sent, or
        # later by the request that freed it, which then sets ``slot_given`` (created only
        # for a request that has to wait).
        self.holds_slot = False
        self.slot_given: trio.Event | None = None
        # Cancelled while still waiting for a slot: it is never sent.
        self.withdrawn = False
        # Set once the GET stream this POST started (after ``notifications/initialized``)
        # has its answer; None if it started none.
        self.get_opened: trio.Event | None = None
        # A request of the per-request era (2026-07-28): its task runs in ``scope``, which
        # a cancel of the request cancels, closing the response (Streamable HTTP >
        # Cancellation: closing the stream cancels the request).
        self.modern = False
        self.scope = trio.CancelScope()

    def mark_sent(self) -> None:
        """Record that the request was written to the connection."""
        self.sent.set()

    def settle(self, error: TransportBroken | None = None) -> bool:
        """Hand ``error`` (or success) to a waiting sender; False if nobody waits any more."""
        self.sent.set()
        if self.detached or self.done.is_set():
            return False
        self.error = error
        self.done.set()
        return True
