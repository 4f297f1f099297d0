"""Start, stop, crash, cancel, kill: what ``init``/``terminate`` see and when, in virtual time."""

from __future__ import annotations

import functools

import pytest
import trio
import trio.testing

from trimcp.actors import (
    KILLED,
    NORMAL,
    SHUTDOWN,
    Actor,
    ActorRef,
    ExitReason,
    ReplyTo,
    crashed,
    monitor,
    spawn,
)
from trimcp.errors import ActorError, ActorGone
from trimcp.testing import Script, ScriptedActor, ScriptedCrash, spawn_unlinked


class Timers(Actor):
    """Arms ``send_after`` timers on request and records when each one fires."""

    def __init__(self) -> None:
        self.fired: list[tuple[object, float]] = []
        self.timers: dict[object, trio.CancelScope] = {}

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        match message:
            case ("arm", float(delay), label):
                self.timers[label] = self.send_after(delay, label)
            case ("disarm", label):
                self.timers[label].cancel()
        return None

    async def handle_info(self, message: object) -> None:
        self.fired.append((message, trio.current_time()))


class Helpers(Actor):
    """Starts helper tasks on request."""

    async def handle_cast(self, message: object) -> None:
        match message:
            case ("crash in", float(delay)):
                self.start_soon(self._crash_after, delay)
            case ("stop in", float(delay)):
                self.start_soon(self._stop_after, delay)

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        match message:
            case "start task":
                return await self.start_task(self._serve_value)
            case "failing start":
                try:
                    await self.start_task(self._fail_before_started)
                except LookupError as exc:
                    return repr(exc)
        return None

    async def _crash_after(self, delay: float) -> None:
        await trio.sleep(delay)
        raise ScriptedCrash("crash_at")

    async def _stop_after(self, delay: float) -> None:
        await trio.sleep(delay)
        self.stop()

    @staticmethod
    async def _serve_value(*, task_status: trio.TaskStatus[object]) -> None:
        task_status.started("ready")
        await trio.sleep_forever()

    @staticmethod
    async def _fail_before_started(*, task_status: trio.TaskStatus[object]) -> None:
        raise LookupError("not started")


class BadTerminate(Actor):
    async def terminate(self, reason: ExitReason) -> None:
        raise ValueError("cleanup failed")


class CrashThenBadTerminate(Actor):
    async def handle_cast(self, message: object) -> None:
        raise ScriptedCrash("crash_on", message)

    async def terminate(self, reason: ExitReason) -> None:
        raise ValueError("cleanup failed")


class QuickTerminate(ScriptedActor):
    terminate_timeout = 1.0


# --- starting -------------------------------------------------------------------------------


async def test_start_returns_the_handle_only_after_init(
    autojump_clock: trio.testing.MockClock,
) -> None:
    actor = ScriptedActor(Script(init_delay=2))
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        assert trio.current_time() == 2.0
        assert actor.started_at == 2.0
        assert ref.statistics().phase == "operation"
        await ref.stop()


async def test_init_failure_is_raised_to_the_starter_as_is(
    autojump_clock: trio.testing.MockClock,
) -> None:
    error = ScriptedCrash("init")
    actor = ScriptedActor(Script(init_error=error, init_delay=1))
    async with trio.open_nursery() as nursery:
        with pytest.raises(ScriptedCrash) as info:
            await spawn(nursery, actor)
        assert info.value is error
        assert trio.current_time() == 1.0
        # The starter's nursery is unaffected, and the actor's records say why.
        assert actor.started_at is None
        assert actor.terminate_reason is None
        assert actor.ref.exit_reason == crashed(error)
        assert actor.ref.exit_reason is not None
        assert actor.ref.exit_reason.error is error


async def test_an_actor_instance_runs_once() -> None:
    actor = ScriptedActor()
    with pytest.raises(ActorError, match="not running"):
        _ = actor.ref
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        with pytest.raises(ActorError, match="runs once"):
            await spawn(nursery, actor)
        await ref.stop()


async def test_unnamed_actors_are_named_after_their_class() -> None:
    async with trio.open_nursery() as nursery:
        first = await spawn(nursery, ScriptedActor())
        second = await spawn(nursery, ScriptedActor())
        assert first.name.startswith("ScriptedActor-")
        assert first.name != second.name
        assert first != second
        assert len({first, second, first}) == 2
        assert "alive" in repr(first)
        await first.stop()
        await second.stop()
    assert "exited: shutdown" in repr(first)


@pytest.mark.parametrize("how", ["request_stop", "kill"])
async def test_stopping_during_init_fails_the_start_with_actor_gone(
    how: str, autojump_clock: trio.testing.MockClock
) -> None:
    actor = ScriptedActor(Script(init_delay=10))
    async with trio.open_nursery() as nursery:

        async def interrupt() -> None:
            await trio.sleep(1)
            if how == "kill":
                actor.ref.kill()
            else:
                actor.ref.request_stop()

        nursery.start_soon(interrupt)
        with pytest.raises(ActorGone) as info:
            await spawn(nursery, actor)
    assert trio.current_time() == 1.0
    assert info.value.reason == (KILLED if how == "kill" else SHUTDOWN)
    assert actor.terminate_reason is None


# --- stopping -------------------------------------------------------------------------------


async def test_stop_runs_terminate_with_the_reason(
    autojump_clock: trio.testing.MockClock,
) -> None:
    actor = ScriptedActor(Script(terminate_delay=1))
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        assert await ref.stop() == SHUTDOWN
    assert actor.terminate_reason == SHUTDOWN
    assert (actor.terminated_at, trio.current_time()) == (0.0, 1.0)
    assert await ref.wait_exited() == SHUTDOWN  # at once, again


async def test_self_stop_exits_normally_after_the_handler() -> None:
    actor = ScriptedActor(Script(stop_on={"bye"}))
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        assert await ref.call("bye") == "bye"  # answered before exiting
        assert await ref.wait_exited() == NORMAL
    assert actor.terminate_reason == NORMAL


async def test_stop_from_a_helper_task_while_idle_exits_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Regression: the loop only looked at the stop request after its next message."""
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Helpers())
        await ref.cast(("stop in", 1.0))
        with trio.fail_after(60):
            assert await ref.wait_exited() == NORMAL
    assert trio.current_time() == 1.0


async def test_crash_runs_terminate_with_the_error(autojump_clock: trio.testing.MockClock) -> None:
    actor = ScriptedActor(Script(crash_at=3))
    async with trio.open_nursery() as nursery:
        ref = await spawn_unlinked(nursery, actor)
        reason = await ref.wait_exited()
    assert trio.current_time() == 3.0
    assert reason.kind == "error"
    assert isinstance(reason.error, ScriptedCrash)
    assert reason.error.trigger == "crash_at"
    assert actor.terminate_reason is reason


async def test_outside_cancellation_runs_terminate_shielded(
    autojump_clock: trio.testing.MockClock,
) -> None:
    actor = ScriptedActor(Script(terminate_delay=2))
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        await trio.sleep(1)
        nursery.cancel_scope.cancel()
    # terminate started at t=1 and finished its 2 s despite the cancellation.
    assert (actor.terminated_at, trio.current_time()) == (1.0, 3.0)
    assert actor.terminate_reason == SHUTDOWN
    assert ref.exit_reason == SHUTDOWN


@pytest.mark.parametrize(
    ("actor_class", "stop_timeout", "killed_at"),
    [(ScriptedActor, None, 5.0), (ScriptedActor, 2.0, 2.0), (QuickTerminate, None, 1.0)],
)
async def test_terminate_overrunning_its_deadline_is_killed(
    actor_class: type[ScriptedActor],
    stop_timeout: float | None,
    killed_at: float,
    autojump_clock: trio.testing.MockClock,
) -> None:
    actor = actor_class(Script(terminate_delay=60))
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        assert await ref.stop(timeout=stop_timeout) == KILLED
    assert trio.current_time() == killed_at
    assert actor.terminate_reason == SHUTDOWN


async def test_terminate_within_its_deadline_keeps_the_reason(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(Script(terminate_delay=4.5)))
        assert await ref.stop() == SHUTDOWN
    assert trio.current_time() == 4.5


async def test_outside_cancellation_is_bounded_by_terminate_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(Script(terminate_delay=60)))
        nursery.cancel_scope.cancel()
    assert trio.current_time() == 5.0
    assert ref.exit_reason == KILLED


async def test_the_first_stop_request_wins_and_later_ones_only_shorten_the_deadline(
    autojump_clock: trio.testing.MockClock,
) -> None:
    actor = ScriptedActor(Script(terminate_delay=60))
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        ref.request_stop(NORMAL, timeout=10)
        await trio.sleep(1)
        ref.request_stop(SHUTDOWN, timeout=20)  # later than t=10: ignored
        ref.request_stop(SHUTDOWN, timeout=2)  # t=3
        assert await ref.wait_exited() == KILLED
    assert trio.current_time() == 3.0
    assert actor.terminate_reason == NORMAL


async def test_kill_skips_terminate(autojump_clock: trio.testing.MockClock) -> None:
    actor = ScriptedActor(Script(handle_delay=60))
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        await ref.cast("busy")
        await trio.sleep(1)
        ref.kill()
        assert await ref.wait_exited() == KILLED
    assert trio.current_time() == 1.0
    assert actor.terminate_reason is None


async def test_kill_cuts_a_running_terminate_short(
    autojump_clock: trio.testing.MockClock,
) -> None:
    actor = ScriptedActor(Script(terminate_delay=60))
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        ref.request_stop()
        await trio.sleep(1)
        ref.kill()
        assert await ref.wait_exited() == KILLED
    assert trio.current_time() == 1.0
    assert actor.terminate_reason == SHUTDOWN


async def test_a_failing_terminate_becomes_the_exit_reason() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn_unlinked(nursery, BadTerminate())
        reason = await ref.stop()
    assert isinstance(reason.error, ValueError)


async def test_a_failing_terminate_after_a_crash_keeps_the_crash() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn_unlinked(nursery, CrashThenBadTerminate())
        await ref.cast("boom")
        reason = await ref.wait_exited()
    assert isinstance(reason.error, ScriptedCrash)
    assert any("cleanup failed" in note for note in reason.error.__notes__)


# --- helpers and timers ---------------------------------------------------------------------


async def test_send_after_fires_at_the_exact_time(autojump_clock: trio.testing.MockClock) -> None:
    actor = Timers()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        await ref.call(("arm", 2.5, "a"))
        await ref.call(("arm", 1.0, "b"))
        await ref.call(("arm", 3.0, "disarmed"))
        await trio.sleep(2)
        await ref.call(("disarm", "disarmed"))
        await trio.sleep(10)
        await ref.stop()
    assert actor.fired == [("b", 1.0), ("a", 2.5)]


async def test_timers_do_not_outlive_the_actor(autojump_clock: trio.testing.MockClock) -> None:
    actor = Timers()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        await ref.call(("arm", 5.0, "too late"))
        await ref.stop()
    assert trio.current_time() == 0.0
    assert actor.fired == []


async def test_a_crashing_helper_task_crashes_its_actor(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn_unlinked(nursery, Helpers())
        await ref.cast(("crash in", 1.5))
        reason = await ref.wait_exited()
    assert trio.current_time() == 1.5
    assert isinstance(reason.error, ScriptedCrash)


async def test_start_task_returns_the_started_value_or_raises_the_early_error() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Helpers())
        assert await ref.call("start task") == "ready"
        assert await ref.call("failing start") == "LookupError('not started')"
        assert ref.alive
        await ref.stop()


async def test_run_can_be_started_directly_with_nursery_start() -> None:
    actor = ScriptedActor()
    async with trio.open_nursery() as nursery:
        ref: ActorRef = await nursery.start(functools.partial(actor.run, name="direct"))
        assert ref.name == "direct"
        assert await ref.call(1) == 1
        await ref.stop()


async def test_a_zero_delay_timer_fires_at_once_and_a_disarmed_one_never(
    autojump_clock: trio.testing.MockClock,
) -> None:
    actor = Timers()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        await ref.call(("arm", 0.0, "now"))
        await ref.call(("arm", 5.0, "later"))
        await trio.sleep(1)
        await ref.call(("disarm", "later"))
        await trio.sleep(10)
        await ref.stop()
    assert actor.fired == [("now", 0.0)]


class Watcher(Actor):
    """Records the ``Down`` notices it gets."""

    def __init__(self) -> None:
        self.downs: list[object] = []

    async def handle_info(self, message: object) -> None:
        self.downs.append(message)


async def test_a_helper_started_from_outside_runs_as_the_actors_helper() -> None:
    watcher = Watcher()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, watcher)
        target = await spawn(nursery, ScriptedActor())

        async def monitor_target() -> None:
            # ``monitor`` without a watcher watches for the actor whose task is running.
            monitor(target)

        watcher.start_soon(monitor_target)  # from the test's task, not the actor's
        await trio.testing.wait_all_tasks_blocked()
        await target.stop()
        await trio.testing.wait_all_tasks_blocked()
        assert len(watcher.downs) == 1
        assert not watcher.stopping
        await ref.stop()
    assert watcher.stopping


async def test_stopping_is_set_by_a_stop_request_before_the_actor_exits() -> None:
    gate = trio.Event()

    class Slow(Actor):
        async def terminate(self, reason: ExitReason) -> None:
            await gate.wait()

    actor = Slow()
    async with trio.open_nursery() as nursery:
        assert actor.stopping  # not running yet
        ref = await spawn(nursery, actor)
        assert not actor.stopping
        ref.request_stop()
        await trio.testing.wait_all_tasks_blocked()
        assert actor.stopping
        assert ref.alive
        gate.set()
        await ref.wait_exited()
    assert actor.stopping
