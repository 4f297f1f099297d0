"""``assert_no_leaked_tasks``, ``leaked_tasks`` and ``live_actors`` read trio's task tree."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from trimcp.actors import ActorRef, spawn
from trimcp.testing import (
    Script,
    ScriptedActor,
    assert_no_leaked_tasks,
    describe_task,
    leaked_tasks,
    live_actors,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


@pytest.fixture
async def fixture_actor() -> AsyncIterator[ActorRef]:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(), name="from-fixture")
        yield ref
        await ref.stop()


def test_sync_tests_are_left_alone() -> None:
    """The autouse leak check must not turn a sync test into a trio one."""


async def test_a_clean_test_has_no_leaks() -> None:
    assert leaked_tasks() == []
    assert_no_leaked_tasks()


async def test_a_task_still_running_is_reported_by_name() -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.sleep_forever, name="forgotten")
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(AssertionError, match=r"1 task\(s\) still running:\n  - 'forgotten'"):
            assert_no_leaked_tasks()
        nursery.cancel_scope.cancel()
    assert_no_leaked_tasks()


async def test_a_leaked_actor_is_named_with_its_helpers() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(Script(reply_delay=60)), name="leaky")
        nursery.start_soon(ref.call, "pending")  # leaves a helper task in the actor
        await trio.testing.wait_all_tasks_blocked()
        actor, caller = sorted(describe_task(task) for task in leaked_tasks())
        assert caller == "'trimcp.actors._ref.ActorRef.call'"
        assert actor == (
            "'trimcp.actors._actor.Actor.run' "
            "(actor 'leaky', phase operation, alive) with 1 child task(s)"
        )
        nursery.cancel_scope.cancel()


async def test_tasks_of_async_fixtures_belong_to_the_fixture(fixture_actor: ActorRef) -> None:
    assert leaked_tasks() == []
    assert live_actors() == [fixture_actor]


async def test_live_actors_follow_the_task_tree(autojump_clock: trio.testing.MockClock) -> None:
    assert live_actors() == []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(spawn, nursery, ScriptedActor(Script(init_delay=1)))
        await trio.testing.wait_all_tasks_blocked()
        [starting] = live_actors()
        assert starting.statistics().phase == "initialization"
        stopping = await spawn(nursery, ScriptedActor(Script(terminate_delay=5)))
        await trio.sleep(1)
        stopping.request_stop()
        await trio.testing.wait_all_tasks_blocked()
        assert set(live_actors()) == {starting, stopping}
        await starting.stop()
        assert live_actors() == [stopping]
    assert live_actors() == []


def test_outside_trio_there_is_nothing_to_walk() -> None:
    with pytest.raises(RuntimeError):
        live_actors()
    with pytest.raises(RuntimeError):
        leaked_tasks()
