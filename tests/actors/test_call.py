"""``ActorRef.call``: replies, typed errors, timeouts in virtual time, deferred and late replies."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.actors import (
    DEFAULT_CALL_TIMEOUT,
    DEFER,
    SHUTDOWN,
    Actor,
    ActorRef,
    ReplyTo,
    Request,
    spawn,
)
from trimcp.errors import ActorGone, CallingSelf, CallTimeout
from trimcp.testing import Script, ScriptedActor, ScriptedCrash, spawn_unlinked


class GetCount(Request[int]):
    """A call whose reply type the checker knows."""


class Counter(Actor):
    def __init__(self) -> None:
        self.count = 0

    async def handle_cast(self, message: object) -> None:
        self.count += 1

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        return self.count


class SlowOrFast(Actor):
    """Answers ``"slow"`` 10 s later from a helper task, anything else at once."""

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        if message == "slow":
            self.start_soon(self._answer_later, reply_to)
            return DEFER
        return message

    async def _answer_later(self, reply_to: ReplyTo) -> None:
        await trio.sleep(10)
        reply_to.reply("late")


class SelfCaller(Actor):
    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        if message == "again":
            return "answered"
        if message == "from-helper":
            self.start_soon(self._call_self_from_helper, reply_to)
            return DEFER
        try:
            await self.ref.call("again")
        except CallingSelf as exc:
            return exc.actor
        raise AssertionError("calling itself from its own task must be refused")

    async def _call_self_from_helper(self, reply_to: ReplyTo) -> None:
        reply_to.reply(await self.ref.call("again"))


class Failing(Actor):
    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        reply_to.fail(LookupError(message))
        return DEFER


async def test_call_returns_the_reply() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(Script(replies={"ping": "pong"})))
        assert await ref.call("ping") == "pong"
        counter = await spawn(nursery, Counter())
        await counter.cast("x")
        count: int = await counter.call(GetCount())
        assert count == 1
        await ref.stop()
        await counter.stop()


async def test_call_times_out_after_the_default_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(Script(handle_delay=60)))
        with pytest.raises(CallTimeout) as info:
            await ref.call("busy")
        assert trio.current_time() == DEFAULT_CALL_TIMEOUT == 5.0
        assert (info.value.actor, info.value.message, info.value.timeout) == (ref.name, "busy", 5.0)
        with pytest.raises(CallTimeout):
            await ref.call("queued", timeout=1.5)
        assert trio.current_time() == 6.5
        await ref.stop()


async def test_timeout_covers_waiting_for_mailbox_space(
    autojump_clock: trio.testing.MockClock,
) -> None:
    actor = ScriptedActor(Script(handle_delay=10))
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor, mailbox_size=1)
        await ref.cast("working")
        await trio.testing.wait_all_tasks_blocked()
        await ref.cast("queued")  # fills the mailbox
        with pytest.raises(CallTimeout):
            await ref.call("never sent", timeout=2)
        assert trio.current_time() == 2.0
        assert ref.statistics().waiting_senders == 0
        await trio.sleep(18)  # both casts handled by t=20
        await ref.stop()
    assert actor.messages() == ["working", "queued"]


async def test_crash_in_handle_call_fails_the_caller_and_run_reraises_it() -> None:
    actor = ScriptedActor(Script(crash_on={"boom"}))
    raised: list[BaseException] = []

    async def run(task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            await actor.run(task_status=task_status)
        except ScriptedCrash as exc:  # a bare exception: an ExceptionGroup would not match
            raised.append(exc)

    async with trio.open_nursery() as nursery:
        ref: ActorRef = await nursery.start(run)
        with pytest.raises(ActorGone) as info:
            await ref.call("boom")
    reason = info.value.reason
    assert reason == ref.exit_reason
    assert ref.exit_reason is not None
    assert ref.exit_reason.kind == "error"
    assert isinstance(ref.exit_reason.error, ScriptedCrash)
    assert raised == [ref.exit_reason.error]
    assert actor.terminate_reason is ref.exit_reason


async def test_crash_propagates_into_the_spawning_nursery_once() -> None:
    with pytest.RaisesGroup(ScriptedCrash):  # one leaf, not a group inside a group
        async with trio.open_nursery() as nursery:
            ref = await spawn(nursery, ScriptedActor(Script(crash_on={"boom"})))
            await ref.cast("boom")


async def test_deferred_reply_from_a_helper_task(autojump_clock: trio.testing.MockClock) -> None:
    replies: list[tuple[object, float]] = []
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(Script(reply_delay=1.0)))

        async def call(message: str) -> None:
            replies.append((await ref.call(message), trio.current_time()))

        nursery.start_soon(call, "a")
        nursery.start_soon(call, "b")
        await trio.testing.wait_all_tasks_blocked()
        assert ref.statistics().deferred_calls == 2
        await trio.sleep(1)
        await trio.testing.wait_all_tasks_blocked()
        assert ref.statistics().deferred_calls == 0
        await ref.stop()
    # Both answered at t=1: the actor kept serving while the first reply was pending.
    assert sorted(replies) == [("a", 1.0), ("b", 1.0)]


async def test_reply_to_fail_raises_in_the_caller() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Failing())
        with pytest.raises(LookupError, match="key"):
            await ref.call("key")
        assert ref.alive
        await ref.stop()


async def test_late_reply_is_dropped_and_the_actor_keeps_working(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, SlowOrFast())
        with pytest.raises(CallTimeout):
            await ref.call("slow", timeout=1)
        assert trio.current_time() == 1.0
        await trio.sleep(10)  # the helper replies at t=10 to nobody
        assert trio.current_time() == 11.0
        assert ref.alive
        assert await ref.call("fast") == "fast"
        assert ref.statistics().deferred_calls == 0
        await ref.stop()


async def test_late_reply_after_the_caller_was_cancelled_is_dropped(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, SlowOrFast())
        with trio.move_on_after(3):
            await ref.call("slow")
        await trio.sleep(10)
        assert await ref.call("fast") == "fast"
        await ref.stop()


async def test_queued_calls_fail_at_once_when_the_actor_exits(
    autojump_clock: trio.testing.MockClock,
) -> None:
    failures: dict[str, tuple[str, float]] = {}
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(Script(handle_delay=60)))

        async def call(message: str) -> None:
            try:
                await ref.call(message, timeout=30)
            except ActorGone as exc:
                failures[message] = (str(exc.reason), trio.current_time())

        for message in ("in flight", "queued 1", "queued 2"):
            nursery.start_soon(call, message)
            await trio.testing.wait_all_tasks_blocked()
        assert ref.statistics().mailbox_length == 2
        await trio.sleep(1)
        assert await ref.stop() == SHUTDOWN
    assert failures == {
        "in flight": ("shutdown", 1.0),
        "queued 1": ("shutdown", 1.0),
        "queued 2": ("shutdown", 1.0),
    }


async def test_pending_deferred_call_fails_when_the_actor_exits(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn_unlinked(nursery, ScriptedActor(Script(reply_delay=10, crash_on={"x"})))

        async def crash_soon() -> None:
            await trio.sleep(2)
            await ref.cast("x")

        nursery.start_soon(crash_soon)
        with pytest.raises(ActorGone) as info:
            await ref.call("deferred")
    assert trio.current_time() == 2.0
    assert info.value.reason == ref.exit_reason
    assert ref.exit_reason is not None
    assert isinstance(ref.exit_reason.error, ScriptedCrash)


async def test_call_to_an_exited_actor_fails_immediately(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor())
        await ref.stop()
    await trio.sleep(3)
    with pytest.raises(ActorGone) as info:
        await ref.call("anyone?")
    assert trio.current_time() == 3.0
    assert info.value.reason == SHUTDOWN
    assert info.value.actor == ref.name


async def test_an_actor_calling_itself_is_refused() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, SelfCaller(), name="narcissus")
        assert await ref.call("go") == "narcissus"
        # A helper task is not the actor's loop, so it may call its own actor.
        assert await ref.call("from-helper") == "answered"
        await ref.stop()


async def test_reply_twice_is_an_error() -> None:
    reply_to = ReplyTo(trio.lowlevel.current_task())
    reply_to.reply(1)
    with pytest.raises(RuntimeError, match="exactly once"):
        reply_to.reply(2)
    with pytest.raises(RuntimeError, match="exactly once"):
        reply_to.fail(ValueError())
    assert await reply_to.wait() == 1
