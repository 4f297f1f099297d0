"""The frozen record ``ActorRef.statistics()`` returns (shown later by the ``trimcp`` CLI)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import final


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ActorStatistics:
    """A snapshot of one actor.

    Attributes:
        name: the actor's name.
        phase: its lifecycle phase's name.
        alive: False once it has exited.
        mailbox_length: messages queued now.
        mailbox_capacity: the mailbox bound.
        mailbox_peak: the most messages ever queued at once.
        overflowed: casts let past the bound to break a wait cycle.
        waiting_senders: tasks blocked waiting for mailbox space.
        dropped: messages discarded: refused by phase, queued at exit, or stale notices.
        calls_served: calls handled (answered now or deferred).
        casts_handled: casts handled.
        infos_handled: infos handled (monitors' Down, timers, ``send_info``).
        deferred_calls: calls deferred and not answered yet.
    """

    name: str
    phase: str
    alive: bool
    mailbox_length: int
    mailbox_capacity: int
    mailbox_peak: int
    overflowed: int
    waiting_senders: int
    dropped: int
    calls_served: int
    casts_handled: int
    infos_handled: int
    deferred_calls: int
