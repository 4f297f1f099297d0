"""``PendingAnswer``: the wait for one outgoing request's answer, shared by both sessions.

The reading side calls ``answer``/``progress`` (never waiting); the requesting task waits.
Times are virtual (``autojump_clock``) and asserted exactly.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.transports import PendingAnswer


async def _deliver_later(
    pending: PendingAnswer[str | None, int], script: list[tuple[float, str, object]]
) -> None:
    """Play ``(at, kind, value)`` steps on the reading side, at absolute virtual times."""
    for at, kind, value in script:
        await trio.sleep_until(at)
        if kind == "progress":
            assert isinstance(value, int)
            pending.progress(value)
        else:
            assert value is None or isinstance(value, str)
            pending.answer(value)


async def test_an_answer_already_there_is_returned_without_waiting() -> None:
    pending: PendingAnswer[str, int] = PendingAnswer()
    pending.answer("done")
    assert pending.answered
    with trio.CancelScope() as scope:
        scope.cancel()
        # No schedule point: a cancelled scope does not stop it.
        assert await pending.wait(5.0) == "done"


async def test_progress_reaches_the_callback_in_order_before_the_answer(
    autojump_clock: trio.testing.MockClock,
) -> None:
    pending: PendingAnswer[str | None, int] = PendingAnswer()
    seen: list[tuple[int, float]] = []
    script = [(1.0, "progress", 1), (2.0, "progress", 2), (2.0, "answer", "done")]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_deliver_later, pending, script)
        answer = await pending.wait(
            10.0, on_progress=lambda p: seen.append((p, trio.current_time()))
        )
    assert answer == "done"
    assert seen == [(1, 1.0), (2, 2.0)]


async def test_an_async_callback_is_awaited_in_the_waiting_task(
    autojump_clock: trio.testing.MockClock,
) -> None:
    pending: PendingAnswer[str | None, int] = PendingAnswer()
    waiter_task = trio.lowlevel.current_task()
    seen: list[int] = []

    async def on_progress(report: int) -> None:
        assert trio.lowlevel.current_task() is waiter_task
        await trio.sleep(1.0)  # the answer arrives meanwhile; it waits its turn
        seen.append(report)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(_deliver_later, pending, [(1.0, "progress", 7), (1.5, "answer", "ok")])
        assert await pending.wait(10.0, on_progress=on_progress) == "ok"
    assert seen == [7]
    assert trio.current_time() == 2.0


async def test_no_answer_in_time_raises_too_slow(autojump_clock: trio.testing.MockClock) -> None:
    pending: PendingAnswer[str, int] = PendingAnswer()
    with pytest.raises(trio.TooSlowError):
        await pending.wait(5.0)
    assert trio.current_time() == 5.0


async def test_progress_restarts_the_timeout(autojump_clock: trio.testing.MockClock) -> None:
    pending: PendingAnswer[str | None, int] = PendingAnswer()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_deliver_later, pending, [(3.0, "progress", 1), (7.0, "progress", 2)])
        with pytest.raises(trio.TooSlowError):
            await pending.wait(5.0)
    assert trio.current_time() == 12.0  # 5 s after the last progress


async def test_progress_can_be_told_not_to_restart_the_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    pending: PendingAnswer[str | None, int] = PendingAnswer()
    seen: list[int] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_deliver_later, pending, [(3.0, "progress", 1)])
        with pytest.raises(trio.TooSlowError):
            await pending.wait(5.0, on_progress=seen.append, restart_on_progress=False)
    assert seen == [1]
    assert trio.current_time() == 5.0


async def test_progress_never_extends_past_the_limit(
    autojump_clock: trio.testing.MockClock,
) -> None:
    pending: PendingAnswer[str | None, int] = PendingAnswer()
    script: list[tuple[float, str, object]] = [(t, "progress", int(t)) for t in (3.0, 6.0, 9.0)]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_deliver_later, pending, script)
        with pytest.raises(trio.TooSlowError):
            await pending.wait(5.0, limit=7.0)
        nursery.cancel_scope.cancel()
    assert trio.current_time() == 7.0


async def test_the_first_answer_counts_and_later_progress_is_ignored() -> None:
    pending: PendingAnswer[str | None, int] = PendingAnswer()
    pending.answer("first")
    pending.answer("second")
    pending.progress(1)
    seen: list[int] = []
    assert await pending.wait(1.0, on_progress=seen.append) == "first"
    assert seen == []


async def test_none_is_an_answer_like_any_other() -> None:
    pending: PendingAnswer[str | None, int] = PendingAnswer()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_deliver_later, pending, [(0.0, "answer", None)])
        assert await pending.wait(1.0) is None


async def test_cancelling_the_waiter_abandons_the_wait(
    autojump_clock: trio.testing.MockClock,
) -> None:
    pending: PendingAnswer[str, int] = PendingAnswer()
    with trio.move_on_after(2.0) as scope:
        await pending.wait(10.0)
    assert scope.cancelled_caught
    assert trio.current_time() == 2.0
    assert not pending.answered
    pending.answer("late")  # the reader may still answer: nobody is woken, nothing fails
