"""Running a request handler inline, in the task that read the request, until it waits.

Most handlers answer without ever waiting, and a task of their own (a spawn and a cancel
scope per request) cost a third of a lone stdio request's time (bench/RESULTS.md). So the
session's reader drives the handler's coroutine itself, and only when the handler is about
to suspend for the first time does it hand its reading role to a fresh task and stay with
the request (``Session._hand_over``).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple, Unpack

if TYPE_CHECKING:
    import contextvars
    from collections.abc import Callable, Coroutine, Generator

__all__ = ["run_inline"]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


@types.coroutine
def run_inline(
    coro: Coroutine[Any, Any, T],
    context: contextvars.Context,
    on_suspend: Callable[[Unpack[Ts]], None],
    *args: *Ts,
) -> Generator[Any, Any, T]:
    """Run ``coro`` in the awaiting task, in ``context``, as ``await`` would.

    Just before ``coro`` first yields to trio (it is about to suspend), call
    ``on_suspend(*args)``; a coroutine that finishes without suspending never calls it, and
    then this is no schedule point at all. Whatever ``coro`` raises comes out of the
    ``await``, including trio's ``Cancelled``.
    """
    # This drives the coroutine the way trio's run loop drives a task, and relies on trio's
    # trap protocol (python-trio/trio: src/trio/_core/_traps.py, and the task step of
    # ``unrolled_run`` in src/trio/_core/_run.py):
    #
    # * every suspension in trio ends in a ``yield`` of a trap message from the innermost
    #   trio primitive; passing it up unchanged makes it the awaiting task's own suspension,
    #   so trio parks, cancels and reschedules that task as if it had awaited ``coro``;
    # * trio resumes a task with ``coro.send(outcome)``, and the trap itself unwraps the
    #   outcome, so a result and an exception (``Cancelled`` included) both arrive through
    #   ``send`` and reach ``coro`` with no special case here;
    # * trio throws into a task (``coro.throw``) only after a yield that is not one of its
    #   traps (a foreign library's); the ``except`` below forwards that to ``coro``.
    #
    # ``context.run`` around each step gives ``coro`` a context of its own, as a new task
    # would have (trio runs the task's step in the task's context; a nested ``run`` of
    # another context is allowed). If trio changes how it resumes tasks, these tests fail
    # first: tests/sessions/test_run_inline.py.
    resume: Callable[[Any], Any] = coro.send
    value: Any = None
    suspended = False
    while True:
        try:
            message = context.run(resume, value)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]  # the coroutine's own T
        if not suspended:
            # The first trap: the handler is about to wait. Nothing has run since it was
            # sent, so the caller can still hand its role to another task in order.
            suspended = True
            on_suspend(*args)
        try:
            value = yield message
        except Exception as exc:  # noqa: BLE001  (not handled: thrown into the coroutine)
            resume, value = coro.throw, exc
        else:
            resume = coro.send
