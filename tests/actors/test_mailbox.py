"""The bounded mailbox on its own: lanes, backpressure, overflow, close."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.actors import Mailbox


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Mailbox[int](0)


async def test_fifo_with_system_lane_first() -> None:
    mailbox = Mailbox[str](4)
    mailbox.put_nowait("u1")
    await mailbox.put("u2")
    mailbox.put_system("s1")
    mailbox.put_system("s2")
    assert [await mailbox.get() for _ in range(4)] == ["s1", "s2", "u1", "u2"]


async def test_put_nowait_on_full_raises_and_queues_nothing() -> None:
    mailbox = Mailbox[int](1)
    mailbox.put_nowait(1)
    with pytest.raises(trio.WouldBlock):
        mailbox.put_nowait(2)
    assert mailbox.statistics().length == 1
    assert await mailbox.get() == 1


async def test_system_lane_ignores_the_bound() -> None:
    mailbox = Mailbox[int](1)
    mailbox.put_nowait(0)
    for n in range(5):
        mailbox.put_system(n)
    stats = mailbox.statistics()
    assert (stats.length, stats.peak, stats.overflowed) == (6, 6, 0)
    assert mailbox.full()


async def test_put_waits_for_space_then_proceeds() -> None:
    mailbox = Mailbox[int](1)
    mailbox.put_nowait(1)
    sent: list[int] = []

    async def send(n: int) -> None:
        await mailbox.put(n)
        sent.append(n)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(send, 2)
        await trio.testing.wait_all_tasks_blocked()
        assert sent == []
        assert mailbox.statistics().waiting_senders == 1
        assert await mailbox.get() == 1
    assert sent == [2]
    assert await mailbox.get() == 2


async def test_waiting_senders_are_served_in_order() -> None:
    mailbox = Mailbox[int](1)
    mailbox.put_nowait(0)
    async with trio.open_nursery() as nursery:
        for n in (1, 2, 3):
            nursery.start_soon(mailbox.put, n)
            # One at a time, so that the order they park in is known.
            await trio.testing.wait_all_tasks_blocked()
        assert mailbox.statistics().waiting_senders == 3
        received = [await mailbox.get() for _ in range(4)]
    assert received == [0, 1, 2, 3]


async def test_a_freed_slot_is_kept_for_the_sender_it_woke() -> None:
    """Regression: between a ``get`` waking a sender and that sender running, the free slot
    looked available: ``full()`` said False (so an actor's cast skipped its cycle check and
    could deadlock) and ``put_nowait`` or an overflow could take it, sending the woken sender
    to the back of the queue."""
    mailbox = Mailbox[int](1)
    mailbox.put_nowait(0)
    async with trio.open_nursery() as nursery:
        for n in (1, 2):
            nursery.start_soon(mailbox.put, n)
            await trio.testing.wait_all_tasks_blocked()
        assert await mailbox.get() == 0
        # Sender 1 was woken but has not run yet: the slot is its, not anyone else's.
        assert mailbox.statistics().length == 0
        assert mailbox.full()
        with pytest.raises(trio.WouldBlock):
            mailbox.put_nowait(99)
        mailbox.put_overflow(3)
        assert [await mailbox.get() for _ in range(3)] == [3, 1, 2]
    assert not mailbox.full()


async def test_cancelled_put_queues_nothing() -> None:
    mailbox = Mailbox[int](1)
    mailbox.put_nowait(1)
    with trio.CancelScope() as scope:
        scope.cancel()
        await mailbox.put(2)
    assert mailbox.statistics().length == 1
    async with trio.open_nursery() as nursery:
        nursery.start_soon(mailbox.put, 3)
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert (len(mailbox), mailbox.statistics().waiting_senders) == (1, 0)


async def test_overflow_goes_past_the_bound_and_is_counted() -> None:
    mailbox = Mailbox[int](1)
    mailbox.put_nowait(1)
    mailbox.put_overflow(2)
    mailbox.put_overflow(3)
    stats = mailbox.statistics()
    assert (stats.length, stats.peak, stats.overflowed) == (3, 3, 2)
    assert [await mailbox.get() for _ in range(3)] == [1, 2, 3]


async def test_close_wakes_senders_and_returns_leftovers() -> None:
    mailbox = Mailbox[str](1)
    mailbox.put_nowait("u")
    mailbox.put_system("s")
    failures: list[str] = []

    async def send() -> None:
        try:
            await mailbox.put("late")
        except trio.ClosedResourceError:
            failures.append("closed")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(send)
        await trio.testing.wait_all_tasks_blocked()
        assert mailbox.close() == ["s", "u"]
    assert failures == ["closed"]
    assert mailbox.close() == []
    assert mailbox.statistics().closed


async def test_close_wakes_the_waiting_receiver() -> None:
    mailbox = Mailbox[int](1)
    async with trio.open_nursery() as nursery:

        async def receive() -> None:
            with pytest.raises(trio.ClosedResourceError):
                await mailbox.get()

        nursery.start_soon(receive)
        await trio.testing.wait_all_tasks_blocked()
        assert mailbox.consumer_waiting
        mailbox.close()
    assert not mailbox.consumer_waiting


async def test_everything_fails_once_closed() -> None:
    mailbox = Mailbox[int](1)
    mailbox.close()
    with pytest.raises(trio.ClosedResourceError):
        await mailbox.get()
    with pytest.raises(trio.ClosedResourceError):
        await mailbox.put(1)
    with pytest.raises(trio.ClosedResourceError):
        mailbox.put_nowait(1)
    with pytest.raises(trio.ClosedResourceError):
        mailbox.put_system(1)
    with pytest.raises(trio.ClosedResourceError):
        mailbox.put_overflow(1)


async def test_receiver_wakes_on_put() -> None:
    mailbox = Mailbox[int](2)
    got: list[int] = []

    async def receive() -> None:
        got.append(await mailbox.get())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(receive)
        await trio.testing.wait_all_tasks_blocked()
        mailbox.put_nowait(7)
        assert not mailbox.consumer_waiting
    assert got == [7]


async def test_cancelled_get_takes_nothing() -> None:
    mailbox = Mailbox[int](2)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(mailbox.get)
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert not mailbox.consumer_waiting
    mailbox.put_nowait(1)
    assert await mailbox.get() == 1


async def test_lanes_come_and_go_without_changing_what_is_seen() -> None:
    mailbox: Mailbox[int] = Mailbox(2)
    assert len(mailbox) == 0
    assert not mailbox.full()
    for round_ in range(3):  # a lane emptied and filled again behaves the same
        mailbox.put_system(10 + round_)
        mailbox.put_nowait(round_)
        assert len(mailbox) == 2
        assert mailbox.statistics().length == 2
        assert await mailbox.get() == 10 + round_  # the system lane first
        assert await mailbox.get() == round_
        assert len(mailbox) == 0
    assert mailbox.statistics().peak == 2
    assert mailbox.statistics().waiting_senders == 0
    assert mailbox.close() == []
