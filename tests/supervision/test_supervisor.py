"""Supervisors under a mock clock: start order, restart types, strategies, intensity, nesting.

Every test that involves time takes ``autojump_clock`` and asserts virtual times exactly.
"""

from __future__ import annotations

import gc

import pytest
import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

from trimcp.actors import KILLED, NORMAL, SHUTDOWN, ActorRef, whereis
from trimcp.errors import RestartIntensityExceeded, StartFailed
from trimcp.supervision import (
    ChildSpec,
    open_supervisor,
    start_child,
    supervisor_spec,
    which_children,
)

from ._scripted import (
    Boom,
    Crash,
    Exit,
    InitFailed,
    Journal,
    Ping,
    Script,
    crash_after,
    info_of,
    ref_of,
    until_given_up,
    worker,
)


async def test_gives_up_after_intensity(autojump_clock: trio.testing.MockClock) -> None:
    # The house example of a supervision test, verbatim but for the bounded wait.
    crasher = ChildSpec(id="crasher", start=crash_after, args=(1.0,))
    with pytest.raises(RestartIntensityExceeded):
        async with open_supervisor([crasher], intensity=3, period=5.0):
            await until_given_up()
    assert trio.current_time() == 4.0  # crashes at 1, 2, 3 restart; the 4th exceeds


async def test_default_intensity_is_one_restart_in_five_seconds(
    autojump_clock: trio.testing.MockClock,
) -> None:
    crasher = ChildSpec("crasher", crash_after, args=(1.0,))
    with pytest.raises(RestartIntensityExceeded) as info:
        async with open_supervisor([crasher]):
            await until_given_up()
    assert trio.current_time() == 2.0
    assert (info.value.intensity, info.value.period) == (1, 5.0)


async def test_a_restart_exactly_period_ago_still_counts(
    autojump_clock: trio.testing.MockClock,
) -> None:
    crasher = ChildSpec("crasher", crash_after, args=(5.0,))
    with pytest.raises(RestartIntensityExceeded):
        async with open_supervisor([crasher]):
            await until_given_up()
    assert trio.current_time() == 10.0


async def test_restarts_spread_wider_than_period_go_on_forever(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    spec = worker("slow", journal, Script(crash_after=5.25))
    with trio.move_on_after(30.0):
        async with open_supervisor([spec]):
            await trio.sleep_forever()
    assert journal.times("init") == [0.0, 5.25, 10.5, 15.75, 21.0, 26.25]
    assert journal.times("terminate")[-1] == 30.0
    assert journal.all_stopped()


async def test_intensity_and_period_are_configurable(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    spec = worker("w", journal, Script(crash_after=3.0))
    with pytest.raises(RestartIntensityExceeded) as info:
        async with open_supervisor([spec], intensity=2, period=10.0):
            await until_given_up()
    assert trio.current_time() == 9.0
    assert journal.times("init") == [0.0, 3.0, 6.0]
    assert (info.value.intensity, info.value.period) == (2, 10.0)


async def test_intensity_zero_gives_up_at_the_first_crash(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    with pytest.raises(RestartIntensityExceeded):
        async with open_supervisor([worker("w", journal, Script(crash_after=1.5))], intensity=0):
            await until_given_up()
    assert trio.current_time() == 1.5
    assert journal.times("init") == [0.0]


async def test_giving_up_stops_every_child_in_reverse_order(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("a", journal),
        worker("b", journal, Script(crash_after=1.0)),
        worker("c", journal),
    ]
    with pytest.raises(RestartIntensityExceeded) as info:
        async with open_supervisor(specs, name="top") as sup:
            await until_given_up()
    assert trio.current_time() == 2.0
    assert journal.ids("init") == ["a", "b", "c", "b"]
    # b's own crash runs its terminate first; then the others in reverse start order.
    assert journal.ids("terminate") == ["b", "b", "c", "a"]
    assert journal.times("terminate") == [1.0, 2.0, 2.0, 2.0]
    assert journal.all_stopped()
    error = info.value
    assert error.supervisor == "top"
    assert len(error.last_failures) == 2
    assert all(f.startswith("b: ") for f in error.last_failures)
    assert sup.exit_reason is not None
    assert sup.exit_reason.error is error


async def test_permanent_child_is_restarted_after_any_exit(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async with open_supervisor([worker("a", journal)], intensity=10) as sup:
        first = ref_of(await which_children(sup), "a")
        first.cast_nowait(Exit())
        await wait_all_tasks_blocked()
        second = ref_of(await which_children(sup), "a")
        assert first.exit_reason == NORMAL
        second.cast_nowait(Crash())
        await wait_all_tasks_blocked()
        third = ref_of(await which_children(sup), "a")
        assert second.exit_reason is not None
        assert isinstance(second.exit_reason.error, Boom)
        await third.stop()  # stopped behind the supervisor's back: still restarted
        await wait_all_tasks_blocked()
        fourth = ref_of(await which_children(sup), "a")
        assert len({first, second, third, fourth}) == 4
        assert fourth.alive
        assert await fourth.call(Ping()) == "a"
    assert journal.ids("init") == ["a"] * 4


async def test_transient_child_is_restarted_only_after_abnormal_exit(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async with open_supervisor([worker("t", journal, restart="transient")], intensity=10) as sup:
        first = ref_of(await which_children(sup), "t")
        first.cast_nowait(Crash())
        await wait_all_tasks_blocked()
        second = ref_of(await which_children(sup), "t")
        assert second != first
        assert second.alive
        second.kill()  # killed is abnormal too
        await wait_all_tasks_blocked()
        third = ref_of(await which_children(sup), "t")
        assert second.exit_reason == KILLED
        assert third != second
        assert third.alive
        third.cast_nowait(Exit())
        await wait_all_tasks_blocked()
        info = info_of(await which_children(sup), "t")
        assert not info.running
        assert third.exit_reason == NORMAL
    assert journal.ids("init") == ["t"] * 3


async def test_transient_child_stopped_with_shutdown_is_not_restarted(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async with open_supervisor([worker("t", journal, restart="transient")]) as sup:
        ref = ref_of(await which_children(sup), "t")
        assert await ref.stop() == SHUTDOWN
        await wait_all_tasks_blocked()
        assert not info_of(await which_children(sup), "t").running
    assert journal.ids("init") == ["t"]


@pytest.mark.parametrize("message", [Crash(), Exit()])
async def test_temporary_child_is_never_restarted_and_is_forgotten(
    autojump_clock: trio.testing.MockClock, journal: Journal, message: object
) -> None:
    specs = [worker("a", journal), worker("tmp", journal, restart="temporary")]
    async with open_supervisor(specs, strategy="one_for_all") as sup:
        a = ref_of(await which_children(sup), "a")
        ref_of(await which_children(sup), "tmp").cast_nowait(message)
        await wait_all_tasks_blocked()
        assert [c.id for c in await which_children(sup)] == ["a"]
        assert ref_of(await which_children(sup), "a") == a  # siblings untouched
    assert journal.ids("init") == ["a", "tmp"]


async def test_one_for_one_restarts_only_the_failed_child(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [worker(c, journal) for c in "abc"]
    async with open_supervisor(specs) as sup:
        before = await which_children(sup)
        ref_of(before, "b").cast_nowait(Crash())
        await wait_all_tasks_blocked()
        after = await which_children(sup)
    assert [c.id for c in after] == ["a", "b", "c"]
    assert ref_of(after, "a") == ref_of(before, "a")
    assert ref_of(after, "c") == ref_of(before, "c")
    assert ref_of(after, "b") != ref_of(before, "b")
    assert journal.ids("init") == ["a", "b", "c", "b"]


async def test_one_for_all_restarts_every_child_and_drops_temporary_siblings(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("a", journal),
        worker("b", journal),
        worker("tmp", journal, restart="temporary"),
        worker("c", journal, restart="transient"),
    ]
    async with open_supervisor(specs, strategy="one_for_all") as sup:
        before = await which_children(sup)
        started = len(journal.entries)
        ref_of(before, "b").cast_nowait(Crash())
        await wait_all_tasks_blocked()
        after = await which_children(sup)
        during = journal.entries[started:]
    assert [c.id for c in after] == ["a", "b", "c"]
    assert all(c.running for c in after)
    assert all(ref_of(after, c) != ref_of(before, c) for c in "abc")
    stops = [e.child for e in during if e.event == "terminate"]
    starts = [e.child for e in during if e.event == "init"]
    assert stops == ["b", "c", "tmp", "a"]  # b crashed; the rest stop in reverse order
    assert starts == ["a", "b", "c"]  # restarted in start order, without tmp


async def test_rest_for_one_restarts_the_failed_child_and_those_started_after(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("a", journal),
        worker("b", journal),
        worker("tmp", journal, restart="temporary"),
        worker("c", journal),
    ]
    async with open_supervisor(specs, strategy="rest_for_one") as sup:
        before = await which_children(sup)
        started = len(journal.entries)
        ref_of(before, "b").cast_nowait(Crash())
        await wait_all_tasks_blocked()
        after = await which_children(sup)
        during = journal.entries[started:]
    assert [c.id for c in after] == ["a", "b", "c"]
    assert ref_of(after, "a") == ref_of(before, "a")
    assert [e.child for e in during if e.event == "terminate"] == ["b", "c", "tmp"]
    assert [e.child for e in during if e.event == "init"] == ["b", "c"]


async def test_rest_for_one_last_child_restarts_alone(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [worker(c, journal) for c in "abc"]
    async with open_supervisor(specs, strategy="rest_for_one") as sup:
        before = await which_children(sup)
        ref_of(before, "c").cast_nowait(Crash())
        await wait_all_tasks_blocked()
        after = await which_children(sup)
    assert [ref_of(after, c) == ref_of(before, c) for c in "abc"] == [True, True, False]


async def test_failed_restarts_count_toward_intensity(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    script = Script(crash_after=1.0, fail_inits=set(range(2, 100)))  # every restart fails
    with pytest.raises(RestartIntensityExceeded) as info:
        async with open_supervisor([worker("w", journal, script)], intensity=3, period=5.0):
            await until_given_up()
    # The crash at 1.0 is restart 1; its three failed attempts are restarts 2-4.
    assert trio.current_time() == 1.0
    assert journal.times("init") == [0.0, 1.0, 1.0, 1.0]
    assert sum("restart failed" in f for f in info.value.last_failures) == 3


async def test_a_failed_restart_is_retried(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    script = Script(crash_after=1.0, fail_inits={2})
    with pytest.raises(RestartIntensityExceeded):
        async with open_supervisor([worker("w", journal, script)], intensity=3, period=5.0):
            await until_given_up()
    # restarts: 1.0 (fails), 1.0 (ok), 2.0, 3.0 -> the fourth exceeds
    assert journal.times("init") == [0.0, 1.0, 1.0, 2.0]
    assert trio.current_time() == 3.0


async def test_failed_restart_of_a_sibling_is_retried_with_its_group(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    b_script = Script(fail_inits={2})
    specs = [worker("a", journal), worker("b", journal, b_script), worker("c", journal)]
    async with open_supervisor(specs, strategy="one_for_all", intensity=5) as sup:
        started = len(journal.entries)
        ref_of(await which_children(sup), "a").cast_nowait(Crash())
        await wait_all_tasks_blocked()
        children = await which_children(sup)
        during = journal.entries[started:]
    assert all(c.running for c in children)
    assert [(e.event, e.child) for e in during] == [
        ("crash", "a"),
        ("terminate", "a"),
        ("terminated", "a"),
        ("terminate", "c"),
        ("terminated", "c"),
        ("terminate", "b"),
        ("terminated", "b"),
        ("init", "a"),
        ("init", "b"),  # fails: a, already started again, is stopped and all retried
        ("terminate", "a"),
        ("terminated", "a"),
        ("init", "a"),
        ("init", "b"),
        ("init", "c"),
    ]


async def test_start_failure_stops_started_children_and_raises_start_failed(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("a", journal),
        worker("b", journal),
        worker("c", journal, Script(fail_inits={1})),
        worker("d", journal),
    ]
    with pytest.raises(StartFailed) as info:
        async with open_supervisor(specs, name="sup"):
            pytest.fail("the block must not run")
    assert info.value.child_id == "c"
    assert info.value.supervisor == "sup"
    assert isinstance(info.value.__cause__, InitFailed)
    assert journal.ids("init") == ["a", "b", "c"]
    assert journal.ids("terminate") == ["b", "a"]
    assert journal.all_stopped()
    assert trio.current_time() == 0.0


async def test_start_failure_of_a_task_status_function(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def refuse(task_status: trio.TaskStatus[object] = trio.TASK_STATUS_IGNORED) -> None:
        await trio.sleep(1.0)
        raise InitFailed("not today")

    with pytest.raises(StartFailed) as info:
        async with open_supervisor([ChildSpec("r", refuse)]):
            pass
    assert isinstance(info.value.__cause__, InitFailed)
    assert trio.current_time() == 1.0


async def test_children_start_in_order_and_stop_in_reverse(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [worker(c, journal) for c in "abcd"]
    async with open_supervisor(specs, name="ordered") as sup:
        assert whereis("ordered") == sup
        assert [c.id for c in await which_children(sup)] == list("abcd")
        await trio.sleep(3.0)
    assert journal.ids("init") == list("abcd")
    assert journal.ids("terminate") == list("dcba")
    assert journal.times("terminate") == [3.0] * 4
    assert sup.exit_reason == SHUTDOWN


async def test_an_exception_from_the_block_stops_children_and_is_raised_as_is(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    class Oops(Exception):
        pass

    async def run_then_raise() -> None:
        async with open_supervisor([worker("a", journal), worker("b", journal)]):
            await trio.sleep(1.0)
            raise Oops

    with pytest.raises(Oops):
        await run_then_raise()
    assert journal.ids("terminate") == ["b", "a"]
    assert journal.all_stopped()


async def test_plain_function_child_is_supported(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async def plain(name: str, lifetime: float) -> None:
        journal.record("start", name)
        try:
            await trio.sleep(lifetime)
        finally:
            journal.record("stop", name)

    specs = [
        ChildSpec("forever", plain, args=("forever", float("inf"))),
        ChildSpec("short", plain, args=("short", 2.0), restart="transient"),
        ChildSpec("again", plain, args=("again", 3.0)),
    ]
    async with open_supervisor(specs, intensity=10) as sup:
        children = await which_children(sup)
        assert [(c.id, c.value, c.running) for c in children] == [
            ("forever", None, True),
            ("short", None, True),
            ("again", None, True),
        ]
        await trio.sleep(7.0)
        children = await which_children(sup)
        assert [c.running for c in children] == [True, False, True]
    # "again" returns normally every 3 s and, being permanent, is started again.
    assert journal.times("start", "again") == [0.0, 3.0, 6.0]
    assert journal.times("stop", "short") == [2.0]
    assert journal.times("stop", "forever") == [7.0]


async def test_nested_supervisor_giving_up_is_restarted_by_its_parent(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    inner = supervisor_spec(
        "inner", [worker("w", journal, Script(crash_after=1.0))], intensity=1, period=5.0
    )
    async with open_supervisor([inner, worker("sibling", journal)], intensity=5) as top:
        first = ref_of(await which_children(top), "inner")
        sibling = ref_of(await which_children(top), "sibling")
        await trio.sleep(2.5)
        second = ref_of(await which_children(top), "inner")
        assert second != first
        assert second.alive
        assert first.exit_reason is not None
        assert isinstance(first.exit_reason.error, RestartIntensityExceeded)
        assert ref_of(await which_children(top), "sibling") == sibling
        worker_ref = ref_of(await which_children(second), "w")
        assert worker_ref.alive
    # The inner supervisor gives up at 2.0 (crashes at 1 and 2) and is restarted then.
    assert journal.times("init", "w") == [0.0, 1.0, 2.0]
    assert journal.all_stopped()


async def test_nested_supervisors_give_up_in_turn(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    inner = supervisor_spec(
        "inner", [worker("w", journal, Script(crash_after=1.0))], intensity=1, period=5.0
    )
    with pytest.raises(RestartIntensityExceeded) as info:
        async with open_supervisor([inner], name="top", intensity=2, period=10.0):
            await until_given_up()
    # inner gives up at 2, 4 and 6; the top allows two restarts in 10 s, so it gives up at 6.
    assert trio.current_time() == 6.0
    assert info.value.supervisor == "top"
    assert journal.all_stopped()


async def test_nested_supervisor_stops_its_children_before_its_parent_moves_on(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    inner = supervisor_spec("inner", [worker("x", journal), worker("y", journal)])
    specs = [worker("a", journal), inner, worker("b", journal)]
    async with open_supervisor(specs):
        await trio.sleep(1.0)
    assert journal.ids("terminate") == ["b", "y", "x", "a"]


async def test_supervisor_ref_is_an_actor_ref(autojump_clock: trio.testing.MockClock) -> None:
    async with open_supervisor() as sup:
        assert isinstance(sup, ActorRef)
        assert await which_children(sup) == []
    assert not sup.alive


def _nurseries() -> int:
    gc.collect()
    return sum(1 for obj in gc.get_objects() if isinstance(obj, trio.Nursery))


async def test_running_children_keep_no_nursery_of_their_start() -> None:
    # ``nursery.start`` runs a child in a temporary nursery until it has started; trio's task
    # status refers to it. Children run long (an idle session), so the supervisor lets go of
    # that status once the child started: otherwise each child kept a nursery (~1 KB).
    async def child(task_status: trio.TaskStatus[object] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started("up")
        with pytest.raises(RuntimeError, match="twice"):
            task_status.started("again")
        await trio.sleep_forever()

    async with open_supervisor([]) as supervisor:
        before = _nurseries()
        for n in range(5):
            await start_child(supervisor, ChildSpec(f"child-{n}", child))
        await wait_all_tasks_blocked()
        assert _nurseries() == before
        supervisor.request_stop()
