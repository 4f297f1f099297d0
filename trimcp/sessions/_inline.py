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
    ``on_suspend(*args)``; a coroutine that finishes without suspending never calls it. After
    that, trio's resumptions pass straight through: trio resumes a task with ``send`` (an
    outcome), and throws in only after a foreign yield.
    """
    resume: Callable[[Any], Any] = coro.send
    value: Any = None
    suspended = False
    while True:
        try:
            message = context.run(resume, value)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]  # the coroutine's own T
        if not suspended:
            suspended = True
            on_suspend(*args)
        try:
            value = yield message
        except Exception as exc:  # noqa: BLE001  (not handled: thrown into the coroutine)
            resume, value = coro.throw, exc
        else:
            resume = coro.send
