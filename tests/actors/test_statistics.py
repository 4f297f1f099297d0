"""``ActorRef.statistics()``: the counters a test (and the CLI) can rely on."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.actors import ActorStatistics, spawn
from trimcp.errors import ActorGone
from trimcp.testing import Script, ScriptedActor


async def test_a_fresh_actor() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(), name="fresh", mailbox_size=8)
        assert ref.statistics() == ActorStatistics(
            name="fresh",
            phase="operation",
            alive=True,
            mailbox_length=0,
            mailbox_capacity=8,
            mailbox_peak=0,
            overflowed=0,
            waiting_senders=0,
            dropped=0,
            calls_served=0,
            casts_handled=0,
            infos_handled=0,
            deferred_calls=0,
        )
        await ref.stop()


async def test_counters_after_traffic() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor())
        for n in range(3):
            await ref.call(n)
        for n in range(2):
            await ref.cast(n)
        ref.send_info("tick")
        await trio.testing.wait_all_tasks_blocked()
        stats = ref.statistics()
        await ref.stop()
    assert (stats.calls_served, stats.casts_handled, stats.infos_handled) == (3, 2, 1)
    assert (stats.mailbox_length, stats.dropped, stats.deferred_calls) == (0, 0, 0)


async def test_peak_waiting_senders_and_drops(autojump_clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(Script(handle_delay=10)), mailbox_size=2)
        await ref.cast("busy")
        await trio.testing.wait_all_tasks_blocked()
        await ref.cast(1)
        await ref.cast(2)

        async def blocked_cast() -> None:
            with pytest.raises(ActorGone):
                await ref.cast(3)

        nursery.start_soon(blocked_cast)
        ref.send_info("notice")  # system lane: past the bound
        await trio.testing.wait_all_tasks_blocked()
        busy = ref.statistics()
        await trio.sleep(1)
        await ref.stop()
    assert (busy.mailbox_length, busy.mailbox_peak, busy.waiting_senders) == (3, 3, 1)
    after = ref.statistics()
    # Queued at exit: 1, 2 and the info; the blocked cast of 3 failed with ActorGone.
    assert (after.alive, after.phase, after.mailbox_length, after.dropped) == (
        False,
        "shutdown",
        0,
        3,
    )
    assert after.casts_handled == 1
    assert after.mailbox_peak == 3


async def test_deferred_calls_are_counted_until_answered(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(Script(reply_delay=2)))
        nursery.start_soon(ref.call, "a")
        nursery.start_soon(ref.call, "b")
        await trio.testing.wait_all_tasks_blocked()
        pending = ref.statistics()
        await trio.sleep(2)
        await trio.testing.wait_all_tasks_blocked()
        answered = ref.statistics()
        await ref.stop()
    assert (pending.calls_served, pending.deferred_calls) == (2, 2)
    assert (answered.calls_served, answered.deferred_calls) == (2, 0)
