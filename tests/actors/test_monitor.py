"""Monitors: one ``Down`` per monitor when the target exits; ``demonitor`` drops a queued one."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.actors import (
    KILLED,
    NORMAL,
    SHUTDOWN,
    Actor,
    ActorRef,
    Down,
    MonitorRef,
    ReplyTo,
    demonitor,
    monitor,
    spawn,
)
from trimcp.errors import ActorError
from trimcp.testing import Script, ScriptedActor, ScriptedCrash, spawn_unlinked


class Watcher(Actor):
    """Monitors whatever handle it is called with, using its own ``monitor``."""

    def __init__(self) -> None:
        self.downs: list[Down] = []

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        if isinstance(message, ActorRef):
            return self.monitor(message)
        if isinstance(message, MonitorRef):
            self.demonitor(message)
        return None

    async def handle_info(self, message: object) -> None:
        if isinstance(message, Down):
            self.downs.append(message)


def downs(actor: ScriptedActor) -> list[Down]:
    return [m for m in actor.messages("info") if isinstance(m, Down)]


async def test_down_carries_the_exit_reason() -> None:
    watcher = Watcher()
    async with trio.open_nursery() as nursery:
        watcher_ref = await spawn(nursery, watcher)
        target = await spawn_unlinked(nursery, ScriptedActor(Script(stop_on={"bye"})))
        mref = await watcher_ref.call(target)
        assert isinstance(mref, MonitorRef)
        assert (mref.target, mref.watcher) == (target, watcher_ref)
        await target.cast("bye")
        assert await target.wait_exited() == NORMAL
        await trio.testing.wait_all_tasks_blocked()
        await watcher_ref.stop()
    assert watcher.downs == [Down(mref, target, NORMAL)]


async def test_down_for_a_crash_carries_the_exception() -> None:
    watcher = ScriptedActor()
    async with trio.open_nursery() as nursery:
        watcher_ref = await spawn(nursery, watcher)
        target = await spawn_unlinked(nursery, ScriptedActor(Script(crash_on={"boom"})))
        monitor(target, watcher=watcher_ref)
        await target.cast("boom")
        await target.wait_exited()
        await trio.testing.wait_all_tasks_blocked()
        await watcher_ref.stop()
    [down] = downs(watcher)
    assert down.ref == target
    assert down.reason.kind == "error"
    assert isinstance(down.reason.error, ScriptedCrash)
    assert down.reason is target.exit_reason


async def test_monitoring_an_exited_actor_delivers_down_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    watcher = ScriptedActor()
    async with trio.open_nursery() as nursery:
        watcher_ref = await spawn(nursery, watcher)
        target = await spawn(nursery, ScriptedActor())
        target.kill()
        await target.wait_exited()
        mref = monitor(target, watcher=watcher_ref)
        assert watcher_ref.statistics().mailbox_length == 1  # queued before any checkpoint
        await trio.testing.wait_all_tasks_blocked()
        assert trio.current_time() == 0.0
        await watcher_ref.stop()
    # An exited actor's reason is still known, so it is delivered instead of ``noproc``.
    assert downs(watcher) == [Down(mref, target, KILLED)]


async def test_every_monitor_gets_its_own_single_down() -> None:
    watcher = ScriptedActor()
    async with trio.open_nursery() as nursery:
        watcher_ref = await spawn(nursery, watcher)
        target = await spawn(nursery, ScriptedActor())
        first = monitor(target, watcher=watcher_ref)
        second = monitor(target, watcher=watcher_ref)
        await target.stop()
        await trio.testing.wait_all_tasks_blocked()
        await watcher_ref.stop()
    assert downs(watcher) == [Down(first, target, SHUTDOWN), Down(second, target, SHUTDOWN)]


async def test_demonitor_before_exit_means_no_down() -> None:
    watcher = Watcher()
    async with trio.open_nursery() as nursery:
        watcher_ref = await spawn(nursery, watcher)
        target = await spawn(nursery, ScriptedActor())
        mref = await watcher_ref.call(target)
        await watcher_ref.call(mref)
        await target.stop()
        await trio.testing.wait_all_tasks_blocked()
        stats = watcher_ref.statistics()
        await watcher_ref.stop()
    assert watcher.downs == []
    assert (stats.mailbox_length, stats.dropped) == (0, 0)


async def test_demonitor_drops_a_queued_down(autojump_clock: trio.testing.MockClock) -> None:
    watcher = ScriptedActor(Script(handle_delay=5))
    async with trio.open_nursery() as nursery:
        watcher_ref = await spawn(nursery, watcher)
        target = await spawn(nursery, ScriptedActor())
        mref = monitor(target, watcher=watcher_ref)
        await watcher_ref.cast("busy until t=5")
        await trio.testing.wait_all_tasks_blocked()
        await target.stop()
        assert watcher_ref.statistics().mailbox_length == 1  # the Down, unread
        demonitor(mref)
        await trio.sleep(5)
        await trio.testing.wait_all_tasks_blocked()
        stats = watcher_ref.statistics()
        await watcher_ref.stop()
    assert downs(watcher) == []
    assert (stats.mailbox_length, stats.dropped, stats.infos_handled) == (0, 1, 0)


async def test_a_watcher_that_exited_first_gets_nothing() -> None:
    async with trio.open_nursery() as nursery:
        watcher_ref = await spawn(nursery, ScriptedActor())
        target = await spawn(nursery, ScriptedActor())
        monitor(target, watcher=watcher_ref)
        await watcher_ref.stop()
        await target.stop()
    assert watcher_ref.statistics().dropped == 0


async def test_monitor_outside_an_actor_needs_a_watcher() -> None:
    async with trio.open_nursery() as nursery:
        target = await spawn(nursery, ScriptedActor())
        with pytest.raises(ActorError, match="watcher"):
            monitor(target)
        await target.stop()
