"""``ScriptedActor``: an actor whose behaviour a test writes down instead of coding it.

A ``Script`` says how the actor answers calls, when it crashes (on a message, after N
messages, or after a delay), whether ``init`` fails or is slow, and how long ``terminate``
takes. The actor records every message it handled, with the trio time it arrived, and the
reason ``terminate`` got, so a test can assert on what happened instead of on log output.

Not a mock: it is a real ``Actor`` that runs through the real runtime, so what a test sees
(timeouts, ``ActorGone``, ``Down``) is what production code would see. For many instances
built from one script (a supervisor restarting a child), see ``ScriptedFactory``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Literal, final

import trio

from trimcp.actors import DEFER, Actor, ExitReason, ReplyTo
from trimcp.errors import ScriptedCrash

HandledKind = Literal["call", "cast", "info"]

#: Which messages a rule applies to: a predicate, a type (``isinstance``), or a collection of
#: messages (compared with ``==``) and types. A ``str`` or ``bytes`` is one message.
MessageMatch = Callable[[object], bool] | type | Collection[object]

#: Where a ``ScriptedCrash`` came from: a failing ``init`` or one of the crash rules.
CrashTrigger = Literal["init", "crash_on", "crash_after", "crash_at"]


@final
@dataclass(frozen=True, slots=True)
class Handled:
    """One message a ``ScriptedActor`` handled.

    Attributes:
        kind: which callback got it.
        message: the message itself.
        time: ``trio.current_time()`` when the handler started (virtual under MockClock).
    """

    kind: HandledKind
    message: object
    time: float


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Script:
    """What a ``ScriptedActor`` does. The defaults make a well-behaved echo actor.

    Rules run in this order for every call, cast and info: record the message, sleep
    ``handle_delay``, crash if ``crash_on`` matches or ``crash_after`` is used up, stop if
    ``stop_on`` matches (a call is still answered first).

    Attributes:
        replies: the answer to a call: ``replies[message]`` for a mapping (a missing key
            crashes the actor with ``KeyError``), ``replies(message)`` for a callable.
            Default None: answer with the message itself.
        reply_delay: if set, answer calls from a helper task this many seconds later
            (``DEFER``), so the actor keeps serving meanwhile. Default None: answer at once.
        crash_on: crash (``ScriptedCrash``) on any message that matches. Default: none.
        crash_after: handle this many messages normally, crash on the next one. Default None.
        crash_at: crash this many seconds after ``init`` returned (a ``send_after`` timer).
            Default None.
        stop_on: stop with reason ``normal`` after handling a matching message. Default: none.
        init_error: raise this from ``init`` (after ``init_delay``). Default None.
        init_delay: seconds ``init`` sleeps before returning. Default 0.
        handle_delay: seconds every handler sleeps before acting (a busy actor). Default 0.
        terminate_delay: seconds ``terminate`` sleeps after recording its reason (to overrun
            a stop timeout). Default 0.
    """

    replies: Mapping[object, object] | Callable[[object], object] | None = None
    reply_delay: float | None = None
    crash_on: MessageMatch = ()
    crash_after: int | None = None
    crash_at: float | None = None
    stop_on: MessageMatch = ()
    init_error: BaseException | None = None
    init_delay: float = 0.0
    handle_delay: float = 0.0
    terminate_delay: float = 0.0


def _matcher(match: MessageMatch) -> Callable[[object], bool]:
    if isinstance(match, type):
        kind = match
        return lambda message: isinstance(message, kind)
    if isinstance(match, str | bytes):
        single: object = match
        return lambda message: message == single
    if callable(match):
        return match
    types = tuple(item for item in match if isinstance(item, type))
    values = [item for item in match if not isinstance(item, type)]
    return lambda message: isinstance(message, types) or any(message == v for v in values)


@final
class _CrashTick:
    """The private timer message behind ``Script.crash_at``."""

    __slots__ = ()


_CRASH_TICK = _CrashTick()


class ScriptedActor(Actor):
    """An ``Actor`` that follows a ``Script`` and records what happened to it.

    Read the records from the test task once the actor is quiet (after a call returned, after
    ``wait_exited``, or after ``trio.testing.wait_all_tasks_blocked``).

    Attributes:
        script: what it does.
        handled: every call, cast and info it handled, in order (not its own ``crash_at``
            timer).
        started_at: when ``init`` returned, or None if it never did.
        terminate_reason: the reason ``terminate`` got, or None if it was not called
            (failed ``init``, ``kill``).
        terminated_at: when ``terminate`` was called, or None.
    """

    def __init__(self, script: Script | None = None) -> None:
        self.script = script or Script()
        self.handled: list[Handled] = []
        self.started_at: float | None = None
        self.terminate_reason: ExitReason | None = None
        self.terminated_at: float | None = None
        self._crash_on = _matcher(self.script.crash_on)
        self._stop_on = _matcher(self.script.stop_on)

    def messages(self, kind: HandledKind | None = None) -> list[object]:
        """Return the messages handled so far, optionally only those of one ``kind``."""
        return [h.message for h in self.handled if kind is None or h.kind == kind]

    async def init(self) -> None:
        """Sleep ``init_delay``, then fail with ``init_error`` or arm ``crash_at``."""
        script = self.script
        if script.init_delay:
            await trio.sleep(script.init_delay)
        if script.init_error is not None:
            raise script.init_error
        if script.crash_at is not None:
            self.send_after(script.crash_at, _CRASH_TICK)
        self.started_at = trio.current_time()

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        """Apply the rules, then answer from ``replies`` (now or after ``reply_delay``)."""
        stop = await self._step("call", message)
        reply = self._reply_for(message)
        if stop:
            self.stop()
        delay = self.script.reply_delay
        if delay is None:
            return reply
        self.start_soon(self._reply_later, reply_to, reply, delay)
        return DEFER

    async def handle_cast(self, message: object) -> None:
        """Apply the rules."""
        if await self._step("cast", message):
            self.stop()

    async def handle_info(self, message: object) -> None:
        """Crash on the ``crash_at`` timer; otherwise apply the rules."""
        if message is _CRASH_TICK:
            raise ScriptedCrash("crash_at")
        if await self._step("info", message):
            self.stop()

    async def terminate(self, reason: ExitReason) -> None:
        """Record ``reason`` and the time, then sleep ``terminate_delay``."""
        self.terminate_reason = reason
        self.terminated_at = trio.current_time()
        if self.script.terminate_delay:
            await trio.sleep(self.script.terminate_delay)

    async def _step(self, kind: HandledKind, message: object) -> bool:
        """Record, delay, maybe crash; return whether ``stop_on`` matched."""
        self.handled.append(Handled(kind, message, trio.current_time()))
        script = self.script
        if script.handle_delay:
            await trio.sleep(script.handle_delay)
        if self._crash_on(message):
            raise ScriptedCrash("crash_on", message)
        if script.crash_after is not None and len(self.handled) > script.crash_after:
            raise ScriptedCrash("crash_after", message)
        return self._stop_on(message)

    def _reply_for(self, message: object) -> object:
        replies = self.script.replies
        if replies is None:
            return message
        if isinstance(replies, Mapping):
            return replies[message]
        return replies(message)

    @staticmethod
    async def _reply_later(reply_to: ReplyTo, reply: object, delay: float) -> None:
        await trio.sleep(delay)
        reply_to.reply(reply)
