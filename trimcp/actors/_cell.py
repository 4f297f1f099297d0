"""The runtime state behind an actor handle: mailbox, phase, counters, monitors, exit.

A cell outlives its actor's task so that handles to a dead actor still answer "gone, because
..." at once. Everything here runs in trio's single thread, so plain attributes need no locks:
no method awaits between reading and writing shared state.
"""

from __future__ import annotations

import itertools
from contextvars import ContextVar
from typing import TYPE_CHECKING, final

import trio

from trimcp.errors import ActorGone, InvalidTransition

from ._envelope import CallEnvelope, Envelope, ReplyTo
from ._mailbox import Mailbox
from ._phase import SHUTDOWN_PHASE, STOP, Phase, PhaseTable

if TYPE_CHECKING:
    from collections.abc import Callable
    from collections.abc import Set as AbstractSet

    from ._exit import ExitReason

_ids = itertools.count(1)

_NONE_DEFERRED: frozenset[ReplyTo] = frozenset()

#: The cell of the actor whose task (or helper task) is running, if any.
current_cell: ContextVar[ActorCell | None] = ContextVar("trimcp_current_actor", default=None)


@final
class ActorCell:
    """Everything the runtime knows about one actor, shared by its handles and its task."""

    __slots__ = (
        "_deferred",
        "_exited",
        "blocked_on",
        "calls_served",
        "casts_handled",
        "dropped",
        "exit_callbacks",
        "exit_reason",
        "id",
        "infos_handled",
        "kill_scopes",
        "mailbox",
        "name",
        "phase",
        "phase_table",
        "stop_deadline",
        "stop_reason",
        "task",
    )

    def __init__(
        self, name: str | None, kind: str, mailbox_size: int, phase_table: PhaseTable
    ) -> None:
        self.id = next(_ids)
        # Unnamed actors are called "<kind>-<n>", unique within the process.
        self.name = name or f"{kind}-{self.id}"
        self.mailbox: Mailbox[Envelope] = Mailbox(mailbox_size)
        self.phase_table = phase_table
        self.phase: Phase = phase_table.initial
        self.task: trio.lowlevel.Task | None = None
        # The cell this actor's own task is blocked sending to or calling, if any: the edges of
        # the wait-for graph that cast() walks to refuse to close a cycle (see _ref.py).
        self.blocked_on: ActorCell | None = None
        # The deferred calls not answered yet, and the event ``exited`` returns: both made on
        # first use (an empty set costs 216 bytes, an event 272), since most actors never
        # defer a call and nobody waits for most of them to exit.
        self._deferred: set[ReplyTo] | None = None
        self._exited: trio.Event | None = None
        self.stop_reason: ExitReason | None = None
        self.stop_deadline: float | None = None
        # Scopes that ``kill`` cancels: the message loop, then ``terminate``'s shielded scope.
        self.kill_scopes: list[trio.CancelScope] = []
        self.exit_reason: ExitReason | None = None
        # Run synchronously, in order, when the actor exits: registry cleanup, monitors.
        # Keyed so that their owner can remove them (demonitor, re-register).
        self.exit_callbacks: dict[object, Callable[[ExitReason], None]] = {}
        self.calls_served = 0
        self.casts_handled = 0
        self.infos_handled = 0
        self.dropped = 0

    @property
    def deferred(self) -> AbstractSet[ReplyTo]:
        """The deferred calls not answered yet (read-only; ``defer`` adds to it)."""
        return _NONE_DEFERRED if self._deferred is None else self._deferred

    def defer(self, reply_to: ReplyTo) -> None:
        """Track a deferred (or interrupted) call so that the actor's exit can fail it."""
        if self._deferred is None:
            self._deferred = set()
        reply_to.track(self._deferred)

    @property
    def exited(self) -> trio.Event:
        """An event set once the actor's exit is recorded (already set if it is)."""
        if self._exited is None:
            self._exited = trio.Event()
            if self.exit_reason is not None:
                self._exited.set()
        return self._exited

    @property
    def alive(self) -> bool:
        """True until the actor's exit has been recorded."""
        return self.exit_reason is None

    def gone_error(self) -> ActorGone:
        """Return the error for a message that reached this actor too late."""
        reason = self.exit_reason or self.stop_reason
        return ActorGone(self.name, reason if reason is not None else "stopping")

    def request_stop(self, reason: ExitReason, timeout: float | None) -> None:
        """Ask the actor to stop: interrupt its loop; give ``terminate`` ``timeout`` seconds.

        The first request wins; later ones may only shorten the deadline.
        """
        if not self.alive:
            return
        if timeout is not None:
            deadline = trio.current_time() + timeout
            if self.stop_deadline is None or deadline < self.stop_deadline:
                self.stop_deadline = deadline
                for scope in self.kill_scopes[1:]:
                    scope.deadline = min(scope.deadline, deadline)
        if self.stop_reason is None:
            self.stop_reason = reason
        if self.kill_scopes:
            self.kill_scopes[0].cancel()

    def kill(self, reason: ExitReason) -> None:
        """Cancel the loop and a running ``terminate`` at once (the second-signal path)."""
        if self.stop_reason is None:
            self.stop_reason = reason
        self.stop_deadline = trio.current_time()
        for scope in self.kill_scopes:
            scope.cancel()

    def enter_shutdown(self, reason: ExitReason) -> None:
        """Move to the shutdown phase, close the mailbox and fail the calls still queued.

        Queued casts and infos are dropped (and counted): nobody will serve them. Deferred
        calls stay open, because ``terminate`` may still answer them.
        """
        try:
            self.phase = self.phase_table.next_phase(self.phase, STOP)
        except InvalidTransition:
            # Stopping must not fail half-way (callers would hang): a phase the table gives
            # no ``stop`` entry ends in the runtime's shutdown phase.
            self.phase = SHUTDOWN_PHASE
        # One error per caller: an exception object raised in several tasks would collect
        # all their tracebacks.
        for envelope in self.mailbox.close():
            if isinstance(envelope, CallEnvelope):
                envelope.reply_to.fail(ActorGone(self.name, reason))
            else:
                self.dropped += 1

    def finish(self, reason: ExitReason) -> None:
        """Record the exit, fail the deferred calls still unanswered, run exit callbacks."""
        self.exit_reason = reason
        deferred, self._deferred = self._deferred, None
        for reply_to in list(deferred or ()):
            reply_to.fail(ActorGone(self.name, reason))
        callbacks, self.exit_callbacks = self.exit_callbacks, {}
        for callback in callbacks.values():
            callback(reason)
        if self._exited is not None:
            self._exited.set()
