"""Scripted children for the supervision tests: actors and plain tasks that act on cue.

Every child writes what happens to it into a shared ``Journal`` with the virtual time, so a
test asserts exact start/stop order and times instead of sleeping "to let things settle".
``Script`` is the part of a child's behaviour that survives restarts (for example "the second
and third inits fail"), because each restart builds a fresh actor.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import trio

from trimcp.actors import NORMAL, Actor, ActorRef, ExitReason, ReplyTo
from trimcp.supervision import ChildSpec

if TYPE_CHECKING:
    import pytest

    from trimcp.supervision import ChildInfo

SUPERVISION_LOGGER = "trimcp.supervision"


class Boom(Exception):
    """A scripted crash."""


class InitFailed(Exception):
    """A scripted start failure."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal line: when, what, which child."""

    time: float
    event: str
    child: str


@dataclass(slots=True)
class Journal:
    """What the scripted children did, in the order they did it."""

    entries: list[Entry] = field(default_factory=list)
    workers: list[ActorRef] = field(default_factory=list)

    def record(self, event: str, child: str) -> None:
        self.entries.append(Entry(trio.current_time(), event, child))

    def ids(self, event: str) -> list[str]:
        """The children that recorded ``event``, in order."""
        return [e.child for e in self.entries if e.event == event]

    def times(self, event: str, child: str | None = None) -> list[float]:
        """When ``event`` happened (to ``child``, if given)."""
        return [e.time for e in self.entries if e.event == event and child in (None, e.child)]

    def events(self, child: str) -> list[str]:
        """Everything that happened to one child, in order."""
        return [e.event for e in self.entries if e.child == child]

    def all_stopped(self) -> bool:
        """Whether every worker actor ever started has exited."""
        return not any(ref.alive for ref in self.workers)


@dataclass(slots=True)
class Script:
    """Behaviour that outlives one incarnation of a child.

    Attributes:
        fail_inits: which inits raise ``InitFailed``, counting from 1 (the first start).
        inits: how many inits ran so far.
        init_delay: seconds each init takes before it succeeds or fails.
        crash_after: every incarnation crashes this many seconds after it started.
        exit_after: every incarnation exits normally this many seconds after it started.
        terminate_delay: seconds ``terminate`` takes (``math.inf``: until cancelled).
    """

    fail_inits: set[int] = field(default_factory=set)
    inits: int = 0
    init_delay: float = 0.0
    crash_after: float | None = None
    exit_after: float | None = None
    terminate_delay: float = 0.0


@dataclass(frozen=True, slots=True)
class Crash:
    """Cast, call or info: raise ``Boom`` in the handler."""


@dataclass(frozen=True, slots=True)
class Exit:
    """Cast, call or info: stop with reason ``normal``."""


@dataclass(frozen=True, slots=True)
class Ping:
    """Call: reply with the worker's id."""


class Worker(Actor):
    """A child actor that records its life in a journal and crashes or exits on cue."""

    def __init__(self, child: str, journal: Journal, script: Script) -> None:
        self.child = child
        self.journal = journal
        self.script = script

    async def init(self) -> None:
        self.journal.record("init", self.child)
        await trio.sleep(self.script.init_delay)
        self.script.inits += 1
        if self.script.inits in self.script.fail_inits:
            raise InitFailed(self.child)
        self.journal.workers.append(self.ref)
        if self.script.crash_after is not None:
            self.send_after(self.script.crash_after, Crash())
        if self.script.exit_after is not None:
            self.send_after(self.script.exit_after, Exit())

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        await self._obey(message)
        return self.child

    async def handle_cast(self, message: object) -> None:
        await self._obey(message)

    async def handle_info(self, message: object) -> None:
        await self._obey(message)

    async def _obey(self, message: object) -> None:
        if isinstance(message, Crash):
            self.journal.record("crash", self.child)
            raise Boom(self.child)
        if isinstance(message, Exit):
            self.journal.record("exit", self.child)
            self.stop(NORMAL)

    async def terminate(self, reason: ExitReason) -> None:
        self.journal.record("terminate", self.child)
        try:
            await trio.sleep(self.script.terminate_delay)
        except trio.Cancelled:
            self.journal.record("terminate-cancelled", self.child)
            raise
        self.journal.record("terminated", self.child)


def worker(
    child: str,
    journal: Journal,
    script: Script | None = None,
    *,
    restart: Literal["permanent", "transient", "temporary"] = "permanent",
    shutdown: float | Literal["brutal_kill"] | None = None,
    significant: bool = False,
) -> ChildSpec:
    """Return a spec for a ``Worker`` child (a fresh actor on every start)."""
    behaviour = script or Script()

    def build() -> Worker:
        return Worker(child, journal, behaviour)

    return ChildSpec.for_actor(
        child, build, restart=restart, shutdown=shutdown, significant=significant
    )


async def crash_after(delay: float) -> None:
    """A plain-function child (no ``task_status``) that crashes after ``delay`` seconds."""
    await trio.sleep(delay)
    raise Boom(f"crashed after {delay:g} s")


def info_of(children: list[ChildInfo], child: str) -> ChildInfo:
    """Return the entry for ``child`` in a ``which_children`` answer."""
    (info,) = (c for c in children if c.id == child)
    return info


def ref_of(children: list[ChildInfo], child: str) -> ActorRef:
    """Return the ``ActorRef`` of a running worker child."""
    value = info_of(children, child).value
    assert isinstance(value, ActorRef)
    return value


def crash_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The ERROR records the supervisor wrote about a child."""
    return [
        r
        for r in caplog.records
        if r.levelno == logging.ERROR
        and r.name.startswith(SUPERVISION_LOGGER)
        and hasattr(r, "child_id")
    ]


async def until_given_up() -> None:
    """Sleep far past any give-up these tests expect.

    A block that waits for its supervisor to give up sleeps here instead of forever, so that a
    regression that keeps restarting fails ("DID NOT RAISE") instead of running forever under
    the autojump clock.
    """
    await trio.sleep(1000.0)
