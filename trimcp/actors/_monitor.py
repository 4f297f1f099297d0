"""Monitors: be told once, by a ``Down`` info message, when another actor exits.

Like ``erlang:monitor(process, Pid)``: monitoring an actor that already exited delivers
``Down`` at once with that actor's exit reason (or ``noproc`` if unknown); ``demonitor``
removes the monitor and drops its ``Down`` if it is already queued. ``Down`` travels in the
watcher's system lane, so an exiting actor never waits on a full mailbox.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import final

from trimcp.errors import ActorError

from ._cell import current_cell
from ._envelope import InfoEnvelope
from ._exit import NOPROC, ExitReason
from ._ref import ActorRef

_ids = itertools.count(1)


@final
@dataclass(eq=False, slots=True)
class MonitorRef:
    """Identifies one monitor; pass it to ``demonitor``. Compared by identity."""

    target: ActorRef
    watcher: ActorRef
    id: int = field(default_factory=lambda: next(_ids))
    #: False once ``demonitor`` was called; a queued ``Down`` of an inactive monitor is dropped.
    active: bool = True
    fired: bool = False

    def __repr__(self) -> str:
        return f"<MonitorRef #{self.id} {self.watcher.name} -> {self.target.name}>"


@final
@dataclass(frozen=True, slots=True)
class Down:
    """The info message a watcher receives when the monitored actor exits."""

    monitor: MonitorRef
    ref: ActorRef
    reason: ExitReason


def monitor(target: ActorRef, *, watcher: ActorRef | None = None) -> MonitorRef:
    """Have ``watcher`` (default: the calling actor) receive ``Down`` when ``target`` exits.

    Raises:
        ActorError: called outside an actor without a ``watcher``.
    """
    if watcher is None:
        cell = current_cell.get()
        if cell is None:
            raise ActorError(
                "monitor() needs a watching actor: call it from an actor's task, pass "
                "watcher=, or use 'await ref.wait_exited()' from a plain task"
            )
        watcher = ActorRef(cell)
    mref = MonitorRef(target, watcher)
    target_cell = target._cell
    if not target_cell.alive:
        _deliver(mref, target_cell.exit_reason or NOPROC)
        return mref

    def on_exit(reason: ExitReason) -> None:
        _deliver(mref, reason)

    target_cell.exit_callbacks[mref] = on_exit
    return mref


def _deliver(mref: MonitorRef, reason: ExitReason) -> None:
    if not mref.active or mref.fired:
        return
    mref.fired = True
    watcher_cell = mref.watcher._cell
    if watcher_cell.alive and not watcher_cell.mailbox.closed:
        watcher_cell.mailbox.put_system(InfoEnvelope(Down(mref, mref.target, reason)))


def demonitor(mref: MonitorRef) -> None:
    """Remove the monitor; a ``Down`` for it that is already queued is dropped unread."""
    mref.active = False
    mref.target._cell.exit_callbacks.pop(mref, None)
