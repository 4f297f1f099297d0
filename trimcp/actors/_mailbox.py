"""A bounded, single-consumer mailbox with a small unbounded lane for runtime notices.

Why not a plain trio memory channel: the runtime must deliver a few kinds of message that may
never wait for space — a monitor's ``Down``, a supervisor's "child exited", a timer firing —
because the sender is itself exiting or is the runtime. Those go into the *system lane*, which
is served first and whose size is bounded by what the program set up (one ``Down`` per monitor,
one exit per child, one message per armed timer), not by traffic. Everything users send goes
into the *user lane*, bounded by ``capacity``.

Full-mailbox policy, stated once:

* ``put`` waits for space (backpressure), in FIFO order of waiting senders.
* ``put_nowait`` raises ``trio.WouldBlock`` at once and sends nothing.
* ``put_overflow`` appends past the bound. The runtime uses it only to break a wait cycle
  between actors (see ``_ref.py``); each use is counted in ``statistics().overflowed``.
* ``close`` wakes every waiting sender with ``trio.ClosedResourceError`` and hands back what
  was still queued, so the owner can fail pending calls instead of leaving them hanging.

The mechanics copy ``trio._channel``: check for cancellation first, park when blocked, and take
a cancel-shielded checkpoint after a non-blocking success, so every send and receive is a
scheduling point exactly like a memory channel's.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Generic, TypeVar, final

import outcome
import trio

T = TypeVar("T")


@final
@dataclass(frozen=True, slots=True)
class MailboxStatistics:
    """A snapshot of a mailbox.

    Attributes:
        length: messages queued now, both lanes.
        capacity: the bound of the user lane.
        peak: the largest ``length`` seen so far.
        overflowed: messages let past the bound to break a wait cycle.
        waiting_senders: tasks blocked in ``put``.
        closed: whether the owner closed it.
    """

    length: int
    capacity: int
    peak: int
    overflowed: int
    waiting_senders: int
    closed: bool


@final
class Mailbox(Generic[T]):
    """Bounded FIFO with one consumer; see the module docstring for the full-mailbox policy."""

    __slots__ = (
        "_capacity",
        "_closed",
        "_overflowed",
        "_peak",
        "_receiver",
        "_reserved",
        "_senders",
        "_system",
        "_user",
    )

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"mailbox capacity must be at least 1, got {capacity}")
        self._capacity = capacity
        # Both lanes and the senders' parking lot are made on first use: an empty deque
        # costs ~760 bytes and a parking lot ~240, and most mailboxes of an idle system (a
        # session per client) never receive anything. None reads as an empty lane.
        self._user: deque[T] | None = None
        self._system: deque[T] | None = None
        self._receiver: trio.lowlevel.Task | None = None
        self._senders: trio.lowlevel.ParkingLot | None = None
        # Slots freed by ``get`` and promised to the senders it woke, which have not run yet.
        # Counting them as taken keeps waiting senders in FIFO order: nobody can slip into
        # the slot first (and make the woken sender queue up again at the back).
        self._reserved = 0
        self._closed = False
        self._peak = 0
        self._overflowed = 0

    @property
    def capacity(self) -> int:
        """The bound of the user lane."""
        return self._capacity

    @property
    def closed(self) -> bool:
        """Whether ``close`` has been called."""
        return self._closed

    def __len__(self) -> int:
        user, system = self._user, self._system
        return (0 if user is None else len(user)) + (0 if system is None else len(system))

    def full(self) -> bool:
        """Return whether a ``put`` would wait now."""
        user = self._user
        return (0 if user is None else len(user)) + self._reserved >= self._capacity

    @property
    def consumer_waiting(self) -> bool:
        """Whether the consumer is parked in ``get`` with nothing delivered to it yet."""
        return self._receiver is not None

    def _append_user(self, item: T) -> None:
        user = self._user
        if user is None:
            user = self._user = deque()
        user.append(item)
        self._delivered()

    def _delivered(self) -> None:
        size = len(self)
        if size > self._peak:
            self._peak = size
        receiver = self._receiver
        if receiver is not None:
            self._receiver = None
            trio.lowlevel.reschedule(receiver, outcome.Value(None))

    def put_nowait(self, item: T) -> None:
        """Queue ``item`` in the user lane without waiting.

        Raises:
            trio.WouldBlock: a ``put`` would wait (see ``full``); nothing was queued.
            trio.ClosedResourceError: the mailbox is closed.
        """
        if self._closed:
            raise trio.ClosedResourceError
        if self.full():
            raise trio.WouldBlock
        self._append_user(item)

    async def put(self, item: T) -> None:
        """Queue ``item`` in the user lane, waiting for space if it is full.

        If cancelled while waiting, nothing was queued.

        Raises:
            trio.ClosedResourceError: the mailbox is (or became, while waiting) closed.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if self._closed:
            raise trio.ClosedResourceError
        if not self.full():
            self._append_user(item)
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        if self._senders is None:
            self._senders = trio.lowlevel.ParkingLot()
        await self._senders.park()
        # Woken by ``get``, which reserved a slot for this sender, or by ``close``.
        if self._closed:
            raise trio.ClosedResourceError
        self._reserved -= 1
        self._append_user(item)

    def put_system(self, item: T) -> None:
        """Queue ``item`` in the unbounded system lane, served before the user lane.

        Raises:
            trio.ClosedResourceError: the mailbox is closed.
        """
        if self._closed:
            raise trio.ClosedResourceError
        system = self._system
        if system is None:
            system = self._system = deque()
        system.append(item)
        self._delivered()

    def put_overflow(self, item: T) -> None:
        """Queue ``item`` in the user lane past its bound (to break a wait cycle).

        Raises:
            trio.ClosedResourceError: the mailbox is closed.
        """
        if self._closed:
            raise trio.ClosedResourceError
        self._overflowed += 1
        self._append_user(item)

    def _wake_next_sender(self) -> None:
        if self._senders and not self.full():
            self._senders.unpark()
            self._reserved += 1

    def _abort_get(self, _: object) -> trio.lowlevel.Abort:
        self._receiver = None
        return trio.lowlevel.Abort.SUCCEEDED

    async def get(self) -> T:
        """Take the next item, system lane first, waiting while both lanes are empty.

        Raises:
            trio.ClosedResourceError: the mailbox is closed.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if not (self._system or self._user):
            if self._closed:
                raise trio.ClosedResourceError
            self._receiver = trio.lowlevel.current_task()
            await trio.lowlevel.wait_task_rescheduled(self._abort_get)
            # Woken by a put or by close(); only the latter leaves both lanes empty.
            if not (self._system or self._user):
                raise trio.ClosedResourceError
        else:
            await trio.lowlevel.cancel_shielded_checkpoint()
        system = self._system
        if system:
            item = system.popleft()
            if not system:
                # Notices are rare: an idle actor keeps no empty lane for them.
                self._system = None
            return item
        assert self._user is not None  # not both lanes empty
        item = self._user.popleft()
        self._wake_next_sender()
        return item

    def close(self) -> list[T]:
        """Close the mailbox and return what was queued (system lane first).

        Waiting senders and the waiting receiver are woken with ``trio.ClosedResourceError``.
        Closing twice returns an empty list the second time.
        """
        if self._closed:
            return []
        self._closed = True
        leftovers = [*(self._system or ()), *(self._user or ())]
        self._system = self._user = None
        if self._senders is not None:
            self._senders.unpark_all()
        receiver = self._receiver
        if receiver is not None:
            self._receiver = None
            trio.lowlevel.reschedule(receiver, outcome.Value(None))
        return leftovers

    def statistics(self) -> MailboxStatistics:
        """Return a snapshot of the mailbox."""
        return MailboxStatistics(
            length=len(self),
            capacity=self._capacity,
            peak=self._peak,
            overflowed=self._overflowed,
            waiting_senders=0 if self._senders is None else len(self._senders),
            closed=self._closed,
        )
