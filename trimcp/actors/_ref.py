"""``ActorRef``: the only way to reach an actor.

A handle holds the actor's cell, never the actor object, so nothing outside the actor's task
can touch its state. Handles stay valid after the actor exits and then fail fast with
``ActorGone`` naming the exit reason.

Full mailboxes and deadlock (the rule, in one place): ``call`` and ``cast`` wait for space,
``cast_nowait`` raises ``MailboxFull``. A wait cannot deadlock the system because the runtime
keeps a wait-for graph: while an actor's own task waits on another actor (for mailbox space
or for a reply) its cell points at that actor. Before a cast from an actor's task would wait on
a full mailbox, the runtime follows those pointers from the receiver; if they lead back to the
sender, waiting would close a cycle, so the message is appended past the bound instead (counted
as ``overflowed``). Each actor waits on at most one other at a time, so the overshoot is at
most one message per waiting actor. A *call* cycle (A calls B while B calls A) is not broken
this way, because a deferred reply may still free it; it ends with ``CallTimeout`` as in OTP.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Generic, TypeVar, final, overload

import trio

from trimcp.errors import CallingSelf, CallTimeout, MailboxFull, MessageRefused

from ._cell import current_cell
from ._envelope import CallEnvelope, CastEnvelope, InfoEnvelope, ReplyTo
from ._exit import KILLED, SHUTDOWN, ExitReason
from ._statistics import ActorStatistics

if TYPE_CHECKING:
    from ._cell import ActorCell

R = TypeVar("R")

DEFAULT_CALL_TIMEOUT = 5.0


class Request(Generic[R]):
    """Optional base for call messages that names their reply type.

    ``class GetCount(Request[int])`` makes ``await ref.call(GetCount())`` typed as ``int``.
    """

    __slots__ = ()


def _would_close_cycle(sender: ActorCell, receiver: ActorCell) -> bool:
    seen = 0
    cell: ActorCell | None = receiver
    while cell is not None:
        if cell is sender:
            return True
        cell = cell.blocked_on
        seen += 1
        if seen > 100_000:  # a cycle that excludes the sender; not ours to break
            return False
    return False


def _sender_cell() -> ActorCell | None:
    """Return the cell whose *own* task is running now (helper tasks do not count)."""
    cell = current_cell.get()
    if cell is not None and cell.task is trio.lowlevel.current_task():
        return cell
    return None


def actor_of_task(task: trio.lowlevel.Task) -> ActorRef | None:
    """Return the actor whose own task ``task`` is, or None (plain and helper tasks).

    For introspection (``trimcp.testing`` walks the task tree with it).
    """
    cell = task.context.get(current_cell)
    if cell is not None and cell.task is task:
        return ActorRef(cell)
    return None


@final
class ActorRef:
    """A handle to an actor. Get one from ``spawn``, ``Actor.ref`` or a registry lookup."""

    __slots__ = ("_cell",)

    def __init__(self, cell: ActorCell) -> None:
        self._cell = cell

    def __repr__(self) -> str:
        state = "alive" if self._cell.alive else f"exited: {self._cell.exit_reason}"
        return f"<ActorRef {self._cell.name} ({state})>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActorRef) and other._cell is self._cell

    def __hash__(self) -> int:
        return self._cell.id

    @property
    def name(self) -> str:
        """The actor's name (its registered name if spawned with one)."""
        return self._cell.name

    @property
    def queued(self) -> int:
        """Messages waiting in the actor's mailbox now (both lanes); cheap to read."""
        return len(self._cell.mailbox)

    @property
    def alive(self) -> bool:
        """True until the actor has exited."""
        return self._cell.alive

    @property
    def exit_reason(self) -> ExitReason | None:
        """Why the actor exited, or None while it is alive."""
        return self._cell.exit_reason

    def _check_accepts(self, message: object) -> None:
        cell = self._cell
        if cell.mailbox.closed:
            raise cell.gone_error()
        if not cell.phase_table.accepts_message(cell.phase, message):
            raise MessageRefused(cell.name, cell.phase.name, message)

    @overload
    async def call(self, message: Request[R], *, timeout: float = ...) -> R: ...
    @overload
    async def call(self, message: object, *, timeout: float = ...) -> object: ...
    async def call(self, message: object, *, timeout: float = DEFAULT_CALL_TIMEOUT) -> object:
        """Send ``message`` to ``handle_call`` and wait for the reply.

        The timeout covers waiting for mailbox space and for the reply. If cancelled (or
        timed out) before the mailbox accepted the message, nothing was sent; after that the
        actor still handles it and its reply is dropped.

        Raises:
            CallTimeout: no reply within ``timeout`` seconds (virtual time under MockClock).
            ActorGone: the actor had exited, or exited before replying.
            CallingSelf: an actor called itself from its own task.
            MessageRefused: the actor's phase does not accept this message.
        """
        cell = self._cell
        self._check_accepts(message)
        sender = _sender_cell()
        if sender is cell:
            raise CallingSelf(cell.name)
        reply_to = ReplyTo(trio.lowlevel.current_task())
        if sender is not None:
            sender.blocked_on = cell
        try:
            if timeout == math.inf:  # no deadline: skip the cancel scope (supervision calls)
                return await self._deliver_and_wait(CallEnvelope(message, reply_to))
            with trio.move_on_after(timeout) as scope:
                return await self._deliver_and_wait(CallEnvelope(message, reply_to))
        finally:
            if sender is not None:
                sender.blocked_on = None
        reply_to.abandon()
        if scope.cancelled_caught:
            raise CallTimeout(cell.name, message, timeout)
        raise AssertionError("unreachable: move_on_after exited without a result")

    async def _deliver_and_wait(self, envelope: CallEnvelope) -> object:
        cell = self._cell
        try:
            await cell.mailbox.put(envelope)
        except trio.ClosedResourceError:
            raise cell.gone_error() from None
        return await envelope.reply_to.wait()

    async def cast(self, message: object) -> None:
        """Send ``message`` to ``handle_cast``, waiting for mailbox space if it is full.

        Waiting never closes a cycle of actors waiting on each other (module docstring).

        Raises:
            ActorGone: the actor has exited or is stopping.
            MessageRefused: the actor's phase does not accept this message.
        """
        cell = self._cell
        self._check_accepts(message)
        mailbox = cell.mailbox
        envelope = CastEnvelope(message)
        sender = _sender_cell() if mailbox.full() else None
        try:
            if sender is None:
                await mailbox.put(envelope)
            elif _would_close_cycle(sender, cell):
                mailbox.put_overflow(envelope)
                await trio.lowlevel.checkpoint()
            else:
                sender.blocked_on = cell
                try:
                    await mailbox.put(envelope)
                finally:
                    sender.blocked_on = None
        except trio.ClosedResourceError:
            raise cell.gone_error() from None

    def cast_nowait(self, message: object) -> None:
        """Send ``message`` to ``handle_cast`` now or not at all.

        Raises:
            MailboxFull: the mailbox is full; nothing was sent.
            ActorGone: the actor has exited or is stopping.
            MessageRefused: the actor's phase does not accept this message.
        """
        cell = self._cell
        self._check_accepts(message)
        try:
            cell.mailbox.put_nowait(CastEnvelope(message))
        except trio.WouldBlock:
            raise MailboxFull(cell.name, cell.mailbox.capacity) from None

    def send_info(self, message: object) -> None:
        """Deliver ``message`` to ``handle_info`` without waiting (the system lane).

        Meant for runtime-style notices (like Erlang's ``!`` from a timer or a watcher), not
        traffic: it bypasses the mailbox bound. Use ``cast`` for anything a peer sends
        repeatedly.

        Raises:
            ActorGone: the actor has exited or is stopping.
        """
        try:
            self._cell.mailbox.put_system(InfoEnvelope(message))
        except trio.ClosedResourceError:
            raise self._cell.gone_error() from None

    def request_stop(self, reason: ExitReason = SHUTDOWN, *, timeout: float | None = None) -> None:
        """Ask the actor to stop, without waiting.

        Its current handler is cancelled, queued calls fail with ``ActorGone``, and
        ``terminate(reason)`` gets ``timeout`` seconds (default: the actor's own
        ``terminate_timeout``) before it is cancelled. Does nothing if it already exited.
        """
        self._cell.request_stop(reason, timeout)

    async def stop(
        self, reason: ExitReason = SHUTDOWN, *, timeout: float | None = None
    ) -> ExitReason:
        """Ask the actor to stop and wait until it has; return its exit reason."""
        self._cell.request_stop(reason, timeout)
        return await self.wait_exited()

    def kill(self) -> None:
        """Stop the actor now: cancel its handler and any running ``terminate``."""
        self._cell.kill(KILLED)

    async def wait_exited(self) -> ExitReason:
        """Wait until the actor has exited and return why. Returns at once if it already has."""
        await self._cell.exited.wait()
        reason = self._cell.exit_reason
        assert reason is not None  # set before ``exited`` is
        return reason

    def statistics(self) -> ActorStatistics:
        """Return a snapshot of the actor's mailbox and counters."""
        cell = self._cell
        mailbox = cell.mailbox.statistics()
        return ActorStatistics(
            name=cell.name,
            phase=cell.phase.name,
            alive=cell.alive,
            mailbox_length=mailbox.length,
            mailbox_capacity=mailbox.capacity,
            mailbox_peak=mailbox.peak,
            overflowed=mailbox.overflowed,
            waiting_senders=mailbox.waiting_senders,
            dropped=cell.dropped,
            calls_served=cell.calls_served,
            casts_handled=cell.casts_handled,
            infos_handled=cell.infos_handled,
            deferred_calls=len(cell.deferred),
        )
