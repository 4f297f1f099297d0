"""``run_inline``: a handler driven in the awaiting task until it first waits.

What the session relies on: a handler that never waits costs no schedule point and never
calls ``on_suspend``; one that waits calls it exactly once, just before its first
suspension, and then runs on in the same task; cancellation and errors come out of the
``await`` as they would from a plain ``await handler()``; the handler's context variables
stay its own. These pin down the parts of trio's trap protocol ``run_inline`` depends on.
"""

from __future__ import annotations

import contextvars
import types
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from trimcp.sessions._inline import run_inline

if TYPE_CHECKING:
    from collections.abc import Coroutine, Generator

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="outside")


class Boom(Exception):
    pass


class Recorder:
    """An ``on_suspend`` that records each call with its arguments and the handler's log."""

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.calls: list[tuple[tuple[object, ...], list[str]]] = []

    def __call__(self, *args: object) -> None:
        self.calls.append((args, list(self.log)))


async def drive(coro: Coroutine[object, object, str], recorder: Recorder) -> str:
    return await run_inline(coro, contextvars.copy_context(), recorder, "role", 7)


async def test_a_handler_that_never_waits_is_no_schedule_point() -> None:
    log: list[str] = []

    async def handler() -> str:
        log.append("ran")
        return "result"

    recorder = Recorder(log)
    with trio.CancelScope() as scope:
        scope.cancel()  # any checkpoint would raise Cancelled here
        assert await drive(handler(), recorder) == "result"
    assert not scope.cancelled_caught
    assert log == ["ran"]
    assert recorder.calls == []


async def test_on_suspend_runs_once_just_before_the_first_wait(
    autojump_clock: trio.testing.MockClock,
) -> None:
    log: list[str] = []
    caller = trio.lowlevel.current_task()

    async def handler() -> str:
        log.append("before")
        await trio.sleep(1)
        assert trio.lowlevel.current_task() is caller  # still the awaiting task
        log.append("between")
        await trio.sleep(1)
        log.append("after")
        return "result"

    recorder = Recorder(log)
    assert await drive(handler(), recorder) == "result"
    assert recorder.calls == [(("role", 7), ["before"])]
    assert log == ["before", "between", "after"]
    assert trio.current_time() == 2.0


async def test_cancellation_reaches_the_handler_and_comes_out_of_the_await(
    autojump_clock: trio.testing.MockClock,
) -> None:
    log: list[str] = []

    async def handler() -> str:
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            log.append("cancelled")
            raise
        return "never"

    recorder = Recorder(log)
    with trio.move_on_after(3) as scope:
        await drive(handler(), recorder)
    assert scope.cancelled_caught
    assert log == ["cancelled"]
    assert len(recorder.calls) == 1
    assert trio.current_time() == 3.0


async def test_an_error_before_any_wait_comes_out_without_on_suspend() -> None:
    async def handler() -> str:
        raise Boom("early")

    recorder = Recorder([])
    with pytest.raises(Boom, match="early"):
        await drive(handler(), recorder)
    assert recorder.calls == []


async def test_an_error_after_a_wait_comes_out_after_one_on_suspend(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def handler() -> str:
        await trio.sleep(1)
        raise Boom("late")

    recorder = Recorder([])
    with pytest.raises(Boom, match="late"):
        await drive(handler(), recorder)
    assert len(recorder.calls) == 1


async def test_the_handler_keeps_its_context_variables_to_itself(
    autojump_clock: trio.testing.MockClock,
) -> None:
    VAR.set("reader")

    async def handler() -> str:
        seen = VAR.get()  # the copy starts from the caller's values
        VAR.set("handler")
        await trio.sleep(1)
        return f"{seen}/{VAR.get()}"  # its own value survives the suspension

    assert await drive(handler(), Recorder([])) == "reader/handler"
    assert VAR.get() == "reader"


@types.coroutine
def _foreign_yield() -> Generator[object, object, object]:
    # What a library written for another event loop would yield: not a trio trap.
    return (yield "not a trio trap")


async def test_what_trio_throws_in_reaches_the_handler() -> None:
    async def handler() -> str:
        try:
            await _foreign_yield()
        except TypeError as exc:  # trio throws this in after a foreign yield
            return f"caught: {exc}"
        return "not thrown"

    recorder = Recorder([])
    result = await drive(handler(), recorder)
    assert result.startswith("caught: ")
    assert "unrecognized yield message 'not a trio trap'" in result
    assert len(recorder.calls) == 1
