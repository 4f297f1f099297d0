"""What travels through a mailbox: the user's message wrapped with how to answer it.

Envelopes are private; users only ever see their own messages in ``handle_call`` /
``handle_cast`` / ``handle_info``. ``__slots__`` classes, not dataclasses, because one is
allocated per message on the hot path.
"""

from __future__ import annotations

from typing import final

import outcome
import trio


@final
class ReplyTo:
    """Where the answer to one call goes; handed to ``handle_call``.

    ``handle_call`` normally just returns its reply. To answer later (from a helper task, after
    other messages), return ``DEFER`` and keep this object; call ``reply`` or ``fail`` exactly
    once. A reply after the caller gave up (timeout, cancellation) is dropped silently; a
    second reply is an error, because it means two code paths think they own the call.
    """

    __slots__ = ("_outcome", "_pending", "_task", "_waiting", "answered")

    def __init__(self, task: trio.lowlevel.Task) -> None:
        self._task: trio.lowlevel.Task | None = task
        self._outcome: outcome.Outcome[object] | None = None
        self._waiting = False
        # The owning actor's set of deferred calls, so that its exit can fail them; set only
        # while the call is deferred.
        self._pending: set[ReplyTo] | None = None
        self.answered = False

    @property
    def abandoned(self) -> bool:
        """True once the caller stopped waiting (timed out or was cancelled)."""
        return self._task is None

    def reply(self, value: object) -> None:
        """Send ``value`` to the caller."""
        self._settle(outcome.Value(value))

    def fail(self, error: BaseException) -> None:
        """Make the caller's ``call`` raise ``error``."""
        self._settle(outcome.Error(error))

    def _settle(self, result: outcome.Outcome[object]) -> None:
        if self.answered:
            raise RuntimeError("this call was already answered; reply exactly once")
        self.answered = True
        if self._pending is not None:
            self._pending.discard(self)
            self._pending = None
        task = self._task
        if task is None:
            return
        if self._waiting:
            self._waiting = False
            self._task = None
            trio.lowlevel.reschedule(task, result)
        else:
            self._outcome = result

    async def wait(self) -> object:
        """Wait for the answer (the caller's side). Cancelling abandons the call."""
        settled = self._outcome
        if settled is not None:
            await trio.lowlevel.checkpoint()
            return settled.unwrap()
        self._waiting = True

        def abort(_: object) -> trio.lowlevel.Abort:
            self._waiting = False
            self._task = None
            return trio.lowlevel.Abort.SUCCEEDED

        return await trio.lowlevel.wait_task_rescheduled(abort)

    def track(self, pending: set[ReplyTo]) -> None:
        """Record this deferred call in its actor's ``pending`` set until it is answered."""
        if not self.answered:
            self._pending = pending
            pending.add(self)

    def abandon(self) -> None:
        """Mark the caller as gone before it started waiting."""
        self._task = None


@final
class Deferred:
    """The type of ``DEFER``: returned by ``handle_call`` to answer later through ``ReplyTo``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEFER"


DEFER = Deferred()


@final
class CallEnvelope:
    __slots__ = ("message", "reply_to")

    def __init__(self, message: object, reply_to: ReplyTo) -> None:
        self.message = message
        self.reply_to = reply_to


@final
class CastEnvelope:
    __slots__ = ("message",)

    def __init__(self, message: object) -> None:
        self.message = message


@final
class InfoEnvelope:
    __slots__ = ("message",)

    def __init__(self, message: object) -> None:
        self.message = message


Envelope = CallEnvelope | CastEnvelope | InfoEnvelope
