"""``PendingAnswer``: one outgoing request waiting for its answer, on either side.

Both sessions send requests to their peer, the server's ``Session`` (sampling, elicitation,
roots, ping) and the client's ``SessionCore`` (every method), and both wait the same way:
the task that sent the request waits here, and the task that reads the connection delivers
what arrives for it synchronously, so a reader never waits on a caller. Progress reported
for the request restarts its timeout (MCP 2025-11-25, Basic > Lifecycle > Timeouts: MAY),
never past an optional overall limit (SHOULD), and reaches the caller's callback in the
caller's own task, in arrival order, before the answer.

What an answer is (a result, an error object, a note that the connection ended) is each
side's business; this module only waits. Not here: request ids, encoding, and the
``notifications/cancelled`` a side sends when it stops waiting.
"""

from __future__ import annotations

import inspect
import math
from collections import deque
from typing import TYPE_CHECKING, Generic, TypeVar, final

import trio

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["PendingAnswer"]

A = TypeVar("A")
P = TypeVar("P")


@final
class PendingAnswer(Generic[A, P]):
    """The wait for one request's answer (``A``), with its progress reports (``P``).

    The reading side calls ``answer`` and ``progress``, which never wait; the requesting
    task calls ``wait`` once. Made per request and dropped with it: nothing is allocated for
    progress until some arrives.
    """

    __slots__ = ("_answer", "_answered", "_progress", "_wake")

    # Set by ``answer``; read only once ``_answered`` is True (A may itself be None).
    _answer: A

    def __init__(self) -> None:
        self._answered = False
        # Progress not yet handed to the waiter, oldest first.
        self._progress: deque[P] | None = None
        # The event the waiter sleeps on, made by the waiter and dropped once set.
        self._wake: trio.Event | None = None

    @property
    def answered(self) -> bool:
        """True once ``answer`` was called."""
        return self._answered

    def answer(self, value: A) -> None:
        """Complete the wait with ``value``; only the first answer counts. Never waits."""
        if self._answered:
            return
        self._answer = value
        self._answered = True
        self._wake_waiter()

    def progress(self, value: P) -> None:
        """Hand a progress report to the waiter; ignored once answered. Never waits."""
        if self._answered:
            return
        if self._progress is None:
            self._progress = deque()
        self._progress.append(value)
        self._wake_waiter()

    def _wake_waiter(self) -> None:
        wake, self._wake = self._wake, None
        if wake is not None:
            wake.set()

    async def wait(
        self,
        timeout: float,
        *,
        on_progress: Callable[[P], Awaitable[None] | None] | None = None,
        restart_on_progress: bool = True,
        limit: float | None = None,
    ) -> A:
        """Wait for the answer and return it.

        ``timeout`` is in seconds of trio's clock (``math.inf``: none). Each progress report
        restarts it if ``restart_on_progress``, but never past ``limit`` seconds from the
        start (None: no limit). ``on_progress`` gets each report that came before the answer,
        in this task and in order, and is awaited if it returns an awaitable; that time
        counts against the timeout. Cancelling the caller abandons the wait; the request is
        then the caller's to cancel.

        Raises:
            trio.TooSlowError: no answer in time (as ``trio.fail_after`` raises it).
        """
        start = trio.current_time()
        cap = math.inf if limit is None else start + limit
        with trio.CancelScope(deadline=min(start + timeout, cap)) as scope:
            while True:
                queued = self._progress
                if queued:
                    report = queued.popleft()
                    if restart_on_progress:
                        scope.deadline = min(trio.current_time() + timeout, cap)
                    if on_progress is not None:
                        outcome = on_progress(report)
                        if inspect.isawaitable(outcome):
                            await outcome
                elif self._answered:
                    self._progress = None
                    return self._answer
                else:
                    self._wake = trio.Event()
                    await self._wake.wait()
        raise trio.TooSlowError
