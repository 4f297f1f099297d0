"""Ordered, bounded shutdown: reverse start order, each child within its ``shutdown`` budget.

Also: shutdown survives outer cancellation (and is not a crash), and a killed supervisor takes
its children along instead of hanging.
"""

from __future__ import annotations

import math

import pytest
import trio
import trio.testing

from trimcp.actors import KILLED, SHUTDOWN, ActorRef
from trimcp.supervision import (
    BRUTAL_KILL,
    ChildSpec,
    Supervisor,
    open_supervisor,
    supervisor_spec,
    terminate_child,
    which_children,
)

from ._scripted import Journal, Script, crash_records, ref_of, worker


async def test_terminate_longer_than_the_budget_is_cancelled_at_the_budget(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    spec = worker("slow", journal, Script(terminate_delay=10.0), shutdown=2.0)
    async with open_supervisor([spec]) as sup:
        ref = ref_of(await which_children(sup), "slow")
        await trio.sleep(1.0)
    assert trio.current_time() == 3.0
    assert journal.times("terminate") == [1.0]
    assert journal.times("terminate-cancelled") == [3.0]
    assert ref.exit_reason == KILLED


async def test_each_child_gets_its_own_budget_in_reverse_order(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("a", journal, Script(terminate_delay=1.0), shutdown=5.0),
        worker("b", journal, Script(terminate_delay=math.inf), shutdown=2.0),
        worker("c", journal, Script(terminate_delay=0.5)),
    ]
    async with open_supervisor(specs):
        pass
    assert [(e.time, e.event, e.child) for e in journal.entries if e.event != "init"] == [
        (0.0, "terminate", "c"),
        (0.5, "terminated", "c"),
        (0.5, "terminate", "b"),
        (2.5, "terminate-cancelled", "b"),
        (2.5, "terminate", "a"),
        (3.5, "terminated", "a"),
    ]
    assert trio.current_time() == 3.5


async def test_shutdown_zero_cancels_terminate_at_once(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    spec = worker("w", journal, Script(terminate_delay=1.0), shutdown=0)
    async with open_supervisor([spec]):
        await trio.sleep(1.0)
    assert journal.times("terminate-cancelled") == [1.0]
    assert trio.current_time() == 1.0


async def test_infinite_budget_waits_as_long_as_terminate_takes(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    spec = worker("w", journal, Script(terminate_delay=100.0), shutdown=math.inf)
    async with open_supervisor([spec]):
        pass
    assert journal.times("terminated") == [100.0]
    assert trio.current_time() == 100.0


async def test_brutal_kill_skips_terminate(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("a", journal, Script(terminate_delay=1.0)),
        worker("b", journal, Script(terminate_delay=1.0), shutdown=BRUTAL_KILL),
    ]
    async with open_supervisor(specs) as sup:
        b = ref_of(await which_children(sup), "b")
        await trio.sleep(2.0)
    assert journal.ids("terminate") == ["a"]
    assert b.exit_reason == KILLED
    assert trio.current_time() == 3.0


async def test_plain_function_child_is_stopped_by_cancellation(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async def plain(cleanup: float) -> None:
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            journal.record("cancelled", "plain")
            with trio.CancelScope(shield=True):
                await trio.sleep(cleanup)  # a plain task bounds its own cleanup
            journal.record("cleaned", "plain")
            raise

    specs = [
        ChildSpec("plain", plain, args=(1.5,)),
        ChildSpec("brutal", plain, args=(0.0,), shutdown=BRUTAL_KILL),
    ]
    async with open_supervisor(specs):
        await trio.sleep(1.0)
    assert journal.times("cancelled") == [1.0, 1.0]
    assert journal.times("cleaned") == [1.0, 2.5]
    assert trio.current_time() == 2.5


async def test_terminate_child_respects_the_budget(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("a", journal),
        worker("slow", journal, Script(terminate_delay=30.0), shutdown=4.0),
    ]
    async with open_supervisor(specs) as sup:
        await terminate_child(sup, "slow")
        assert trio.current_time() == 4.0
        assert [c.running for c in await which_children(sup)] == [True, False]
    assert journal.ids("terminate") == ["slow", "a"]


async def test_outer_cancellation_runs_the_ordered_shutdown_and_is_no_crash(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    specs = [worker(c, journal, Script(terminate_delay=1.0)) for c in "abc"]
    with trio.move_on_after(2.0) as scope:
        async with open_supervisor(specs) as sup:
            await trio.sleep_forever()
    assert scope.cancelled_caught
    assert journal.ids("init") == ["a", "b", "c"]  # nothing restarted
    assert journal.ids("terminated") == ["c", "b", "a"]
    assert journal.times("terminated") == [3.0, 4.0, 5.0]  # the shutdown outlives the deadline
    assert trio.current_time() == 5.0
    assert sup.exit_reason == SHUTDOWN
    assert crash_records(supervision_log) == []
    assert journal.all_stopped()


async def test_outer_cancellation_still_bounds_each_child(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("a", journal, Script(terminate_delay=1.0)),
        worker("stuck", journal, Script(terminate_delay=math.inf), shutdown=3.0),
    ]
    with trio.move_on_after(1.0):
        async with open_supervisor(specs):
            await trio.sleep_forever()
    assert journal.times("terminate-cancelled", "stuck") == [4.0]
    assert journal.times("terminated", "a") == [5.0]
    assert trio.current_time() == 5.0


async def test_outer_cancellation_reaches_nested_supervisors_in_order(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    inner = supervisor_spec("inner", [worker("x", journal), worker("y", journal)])
    specs = [worker("a", journal), inner, worker("b", journal)]
    with trio.move_on_after(1.0):
        async with open_supervisor(specs) as sup:
            inner_ref = ref_of(await which_children(sup), "inner")
            await trio.sleep_forever()
    assert journal.ids("terminate") == ["b", "y", "x", "a"]
    assert inner_ref.exit_reason == SHUTDOWN
    assert crash_records(supervision_log) == []


async def test_cancelling_while_children_start_stops_them_in_order(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [worker(c, journal, Script(init_delay=1.0)) for c in "abc"]
    with trio.move_on_after(1.5):
        async with open_supervisor(specs):
            pytest.fail("the block must not run: the supervisor was still starting")
    # A child's start is not interrupted (b finishes its init at 2.0), nothing more starts,
    # and what init started is stopped in reverse order, terminate and all.
    assert journal.ids("init") == ["a", "b"]
    assert journal.ids("terminated") == ["b", "a"]
    assert journal.times("terminated") == [2.0, 2.0]
    assert trio.current_time() == 2.0
    assert journal.all_stopped()


async def test_a_killed_supervisor_takes_its_children_along(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [worker(c, journal, Script(terminate_delay=1.0)) for c in "ab"]
    with trio.fail_after(10.0):
        async with open_supervisor(specs) as sup:
            children = [ref_of(await which_children(sup), c) for c in "ab"]
            await trio.sleep(1.0)
            sup.kill()
            assert await sup.wait_exited() == KILLED
            assert trio.current_time() == 1.0
    assert all(ref.exit_reason == KILLED for ref in children)
    assert journal.ids("terminate") == []  # killed, like an Erlang exit(Pid, kill)
    assert journal.all_stopped()


async def test_a_brutally_killed_nested_supervisor_takes_its_children_along(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    def nested() -> Supervisor:
        return Supervisor([worker("x", journal), worker("y", journal)])

    inner = ChildSpec.for_actor("inner", nested, kind="supervisor", shutdown=BRUTAL_KILL)
    with trio.fail_after(10.0):
        async with open_supervisor([worker("a", journal), inner]):
            await trio.sleep(1.0)
    assert journal.ids("terminate") == ["a"]
    assert journal.all_stopped()
    assert trio.current_time() == 1.0


async def test_a_nested_supervisor_over_its_budget_is_killed_mid_shutdown(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    def nested() -> Supervisor:
        return Supervisor(
            [
                worker("x", journal),
                worker("y", journal, Script(terminate_delay=10.0), shutdown=5.0),
            ]
        )

    inner = ChildSpec.for_actor("inner", nested, kind="supervisor", shutdown=2.0)
    async with open_supervisor([inner]) as sup:
        inner_ref = ref_of(await which_children(sup), "inner")
    assert isinstance(inner_ref, ActorRef)
    assert inner_ref.exit_reason == KILLED
    assert journal.ids("terminate") == ["y"]  # x was never asked: its supervisor was killed
    assert journal.times("terminate-cancelled") == [2.0]
    assert journal.all_stopped()
    assert trio.current_time() == 2.0
