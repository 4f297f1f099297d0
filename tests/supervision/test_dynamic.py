"""Children managed at runtime: start/terminate/restart/delete, introspection, errors.

Errors (``ChildNotFound``, ``DuplicateChild``, ``InvalidChildSpec``, ``StartFailed``, ...) go
back to the caller; the supervisor keeps running and logs no crash.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

from trimcp.actors import SHUTDOWN, ActorRef
from trimcp.errors import (
    ChildNotFound,
    DuplicateChild,
    InvalidChildSpec,
    RestartIntensityExceeded,
    StartFailed,
    SupervisorError,
)
from trimcp.supervision import (
    ChildCounts,
    ChildInfo,
    ChildSpec,
    count_children,
    delete_child,
    open_supervisor,
    restart_child,
    start_child,
    supervisor_spec,
    terminate_child,
    which_children,
)

from ._scripted import (
    Crash,
    Exit,
    InitFailed,
    Journal,
    Ping,
    Script,
    Worker,
    crash_records,
    info_of,
    ref_of,
    until_given_up,
    worker,
)


async def test_which_children_reports_every_child_in_start_order(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("a", journal),
        worker("b", journal, restart="transient"),
        supervisor_spec("sub", [worker("x", journal)]),
        worker("c", journal, restart="temporary"),
    ]
    async with open_supervisor(specs) as sup:
        children = await which_children(sup)
        assert [(c.id, c.running, c.restart, c.kind) for c in children] == [
            ("a", True, "permanent", "worker"),
            ("b", True, "transient", "worker"),
            ("sub", True, "permanent", "supervisor"),
            ("c", True, "temporary", "worker"),
        ]
        assert all(isinstance(c.value, ActorRef) and c.value.alive for c in children)
        assert await ref_of(children, "a").call(Ping()) == "a"
        assert await count_children(sup) == ChildCounts(specs=4, active=4, supervisors=1, workers=3)
        ref_of(children, "b").cast_nowait(Exit())
        await wait_all_tasks_blocked()
        assert await count_children(sup) == ChildCounts(specs=4, active=3, supervisors=1, workers=3)


async def test_start_child_appends_and_starts_a_child(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async with open_supervisor([worker("a", journal)], strategy="rest_for_one") as sup:
        info = await start_child(sup, worker("b", journal))
        assert isinstance(info, ChildInfo)
        assert (info.id, info.running) == ("b", True)
        assert isinstance(info.value, ActorRef)
        assert await info.value.call(Ping()) == "b"
        assert [c.id for c in await which_children(sup)] == ["a", "b"]
        # A dynamically added child is part of the start order: rest_for_one restarts it.
        ref_of(await which_children(sup), "a").cast_nowait(Crash())
        await wait_all_tasks_blocked()
        assert ref_of(await which_children(sup), "b") != info.value
    assert journal.ids("init") == ["a", "b", "a", "b"]
    assert journal.ids("terminate")[-2:] == ["b", "a"]


async def test_terminate_child_keeps_a_permanent_spec_for_restart_child(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async with open_supervisor([worker("a", journal), worker("b", journal)]) as sup:
        old = ref_of(await which_children(sup), "a")
        await terminate_child(sup, "a")
        assert old.exit_reason == SHUTDOWN
        assert [(c.id, c.running) for c in await which_children(sup)] == [
            ("a", False),
            ("b", True),
        ]
        await wait_all_tasks_blocked()
        assert not info_of(await which_children(sup), "a").running  # not restarted
        await terminate_child(sup, "a")  # terminating a stopped child is fine
        new = await restart_child(sup, "a")
        assert isinstance(new, ActorRef)
        assert new != old
        assert ref_of(await which_children(sup), "a") == new
        assert [c.id for c in await which_children(sup)] == ["a", "b"]  # order kept
    assert journal.ids("init") == ["a", "b", "a"]


async def test_terminate_child_forgets_a_temporary_child(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async with open_supervisor([worker("tmp", journal, restart="temporary")]) as sup:
        await terminate_child(sup, "tmp")
        assert await which_children(sup) == []


async def test_delete_child_forgets_a_stopped_child(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async with open_supervisor([worker("a", journal), worker("b", journal)]) as sup:
        await terminate_child(sup, "a")
        await delete_child(sup, "a")
        assert [c.id for c in await which_children(sup)] == ["b"]
        info = await start_child(sup, worker("a", journal))  # the id is free again
        assert [c.id for c in await which_children(sup)] == ["b", "a"]
        assert info.running


async def test_errors_go_to_the_caller_and_the_supervisor_carries_on(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    significant = worker("sig", journal, restart="transient", significant=True)
    async with open_supervisor([worker("a", journal)], name="sup") as sup:
        with pytest.raises(ChildNotFound) as missing:
            await terminate_child(sup, "nope")
        assert (missing.value.supervisor, missing.value.child_id) == ("sup", "nope")
        with pytest.raises(ChildNotFound):
            await restart_child(sup, "nope")
        with pytest.raises(ChildNotFound):
            await delete_child(sup, "nope")
        with pytest.raises(DuplicateChild) as duplicate:
            await start_child(sup, worker("a", journal))
        assert duplicate.value.child_id == "a"
        with pytest.raises(SupervisorError, match="is running"):
            await restart_child(sup, "a")
        with pytest.raises(SupervisorError, match="is running"):
            await delete_child(sup, "a")
        with pytest.raises(InvalidChildSpec, match="auto_shutdown"):
            await start_child(sup, significant)
        with pytest.raises(InvalidChildSpec, match="needs a ChildSpec"):
            await start_child(sup, args=(1,))
        with pytest.raises(StartFailed) as failed:
            await start_child(sup, worker("bad", journal, Script(fail_inits={1})))
        assert isinstance(failed.value.__cause__, InitFailed)
        with pytest.raises(SupervisorError, match="does not understand"):
            await sup.call("hello")
        assert sup.alive
        assert [(c.id, c.running) for c in await which_children(sup)] == [("a", True)]
    assert journal.ids("init") == ["a", "bad"]
    assert crash_records(supervision_log) == []


async def test_restart_child_that_fails_to_start_stays_stopped(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    script = Script(fail_inits={2})
    async with open_supervisor([worker("a", journal, script)]) as sup:
        await terminate_child(sup, "a")
        with pytest.raises(StartFailed):
            await restart_child(sup, "a")
        assert not info_of(await which_children(sup), "a").running
        assert isinstance(await restart_child(sup, "a"), ActorRef)
        assert info_of(await which_children(sup), "a").running


async def test_concurrent_management_calls_are_served_one_at_a_time(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [worker(c, journal, Script(terminate_delay=1.0)) for c in "abc"]
    async with open_supervisor(specs) as sup, trio.open_nursery() as nursery:
        for child in "abc":
            nursery.start_soon(terminate_child, sup, child)
    # The supervisor handles one call at a time, so the stops do not overlap.
    assert sorted(journal.times("terminated")) == [1.0, 2.0, 3.0]


# --- simple_one_for_one ----------------------------------------------------------------------


def template(journal: Journal, **options: object) -> ChildSpec:
    """A simple_one_for_one template; ``start_child(args=(name, script))`` starts a Worker."""

    async def start(
        name: str, script: Script, task_status: trio.TaskStatus[object] = trio.TASK_STATUS_IGNORED
    ) -> None:
        await Worker(name, journal, script).run(task_status=task_status)

    return ChildSpec("conn", start, **options)  # type: ignore[arg-type]


async def test_simple_one_for_one_starts_children_from_the_template(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async with open_supervisor([template(journal)], strategy="simple_one_for_one") as sup:
        assert await which_children(sup) == []  # the template itself is not started
        first = await start_child(sup, args=("one", Script()))
        second = await start_child(sup, args=("two", Script()))
        assert (first.id, second.id) == ("conn-1", "conn-2")
        assert isinstance(second.value, ActorRef)
        assert await second.value.call(Ping()) == "two"  # args reached the child
        assert [c.id for c in await which_children(sup)] == ["conn-1", "conn-2"]
        with pytest.raises(InvalidChildSpec, match="takes args, not a spec"):
            await start_child(sup, worker("x", journal))
        await terminate_child(sup, "conn-1")
        assert [c.id for c in await which_children(sup)] == ["conn-2"]
        with pytest.raises(ChildNotFound):
            await terminate_child(sup, "conn-1")
        third = await start_child(sup, args=("three", Script()))
        assert third.id == "conn-3"  # ids are never reused
    # simple_one_for_one children stop concurrently, so only the set is fixed.
    assert sorted(journal.ids("terminate")) == ["one", "three", "two"]


@pytest.mark.parametrize(
    ("restart", "left_running"),
    [
        ("permanent", ["conn-1", "conn-2"]),
        ("transient", ["conn-1"]),  # restarted after the crash, forgotten after the exit
        ("temporary", []),
    ],
)
async def test_simple_one_for_one_restart_types(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    restart: str,
    left_running: list[str],
) -> None:
    async with open_supervisor(
        [template(journal, restart=restart)], strategy="simple_one_for_one", intensity=10
    ) as sup:
        crashing = await start_child(sup, args=("crashing", Script()))
        exiting = await start_child(sup, args=("exiting", Script()))
        assert isinstance(crashing.value, ActorRef)
        assert isinstance(exiting.value, ActorRef)
        crashing.value.cast_nowait(Crash())
        exiting.value.cast_nowait(Exit())
        await wait_all_tasks_blocked()
        left = await which_children(sup)
    assert [c.id for c in left] == left_running
    assert all(c.running for c in left)


async def test_simple_one_for_one_start_failure_leaves_no_child(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async with open_supervisor([template(journal)], strategy="simple_one_for_one") as sup:
        with pytest.raises(StartFailed) as info:
            await start_child(sup, args=("bad", Script(fail_inits={1})))
        assert info.value.child_id == "conn-1"
        assert await which_children(sup) == []
        assert (await start_child(sup, args=("good", Script()))).running


async def test_simple_one_for_one_children_stop_concurrently(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    spec = template(journal, shutdown=5.0)
    async with open_supervisor([spec], strategy="simple_one_for_one") as sup:
        for name in ("one", "two", "three"):
            await start_child(sup, args=(name, Script(terminate_delay=2.0)))
        await start_child(sup, args=("stuck", Script(terminate_delay=60.0)))
        await trio.sleep(1.0)
    # All four are asked at 1.0; three finish at 3.0, the stuck one is cancelled at 6.0.
    assert journal.times("terminate") == [1.0] * 4
    assert journal.times("terminated") == [3.0] * 3
    assert journal.times("terminate-cancelled", "stuck") == [6.0]
    assert trio.current_time() == 6.0
    assert journal.all_stopped()


async def test_simple_one_for_one_gives_up_like_the_others(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async def run() -> None:
        async with open_supervisor(
            [template(journal)], strategy="simple_one_for_one", intensity=1, period=5.0
        ) as sup:
            await start_child(sup, args=("a", Script(crash_after=1.0)))
            await start_child(sup, args=("b", Script()))
            await until_given_up()

    with pytest.raises(RestartIntensityExceeded):
        await run()
    assert trio.current_time() == 2.0
    assert journal.all_stopped()


async def test_simple_one_for_one_actor_template_passes_args_to_the_factory() -> None:
    from trimcp.actors import Actor, ReplyTo

    class Greeter(Actor):
        def __init__(self, greeting: str, who: str) -> None:
            self.text = f"{greeting}, {who}"

        async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
            return self.text

    template = ChildSpec.for_actor("greeter", Greeter, restart="temporary")
    async with open_supervisor([template], strategy="simple_one_for_one") as sup:
        first = await start_child(sup, args=("hello", "ada"))
        second = await start_child(sup, args=("hi", "alan"))
        assert [first.id, second.id] == ["greeter-1", "greeter-2"]
        assert isinstance(first.value, ActorRef)
        assert isinstance(second.value, ActorRef)
        assert await first.value.call("text") == "hello, ada"
        assert await second.value.call("text") == "hi, alan"
