"""``cast``, ``cast_nowait`` and ``send_info``: backpressure, full mailboxes, no deadlock."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.actors import Actor, ActorRef, ReplyTo, spawn
from trimcp.errors import ActorGone, MailboxFull
from trimcp.testing import Script, ScriptedActor


class Flooder(Actor):
    """On ``("flood", n)`` waits for ``gate``, then casts ``n`` messages to its peer."""

    def __init__(self, gate: trio.Event) -> None:
        self.gate = gate
        self.peer: ActorRef | None = None
        self.received = 0

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        if isinstance(message, ActorRef):
            self.peer = message
        return self.received

    async def handle_cast(self, message: object) -> None:
        match message:
            case ("flood", int(count)):
                await self.gate.wait()
                assert self.peer is not None
                for _ in range(count):
                    await self.peer.cast("x")
            case _:
                self.received += 1


async def test_casts_are_handled_in_order() -> None:
    actor = ScriptedActor()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        for n in range(5):
            await ref.cast(n)
        ref.cast_nowait(5)
        await trio.testing.wait_all_tasks_blocked()
        assert actor.messages("cast") == [0, 1, 2, 3, 4, 5]
        await ref.stop()
    assert ref.statistics().dropped == 0


async def test_casts_still_queued_at_exit_are_dropped_and_counted() -> None:
    gate = trio.Event()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Blocker(gate))
        await ref.cast("hold")
        await trio.testing.wait_all_tasks_blocked()
        for n in range(3):
            await ref.cast(n)
        ref.send_info("info")
        await ref.stop()
    assert ref.statistics().dropped == 4
    assert ref.statistics().casts_handled == 1


async def test_cast_waits_for_space_then_proceeds(autojump_clock: trio.testing.MockClock) -> None:
    actor = ScriptedActor(Script(handle_delay=10))
    returned_at: list[float] = []
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor, mailbox_size=1)
        await ref.cast("a")  # taken at once; busy until t=10
        await trio.testing.wait_all_tasks_blocked()
        await ref.cast("b")  # fills the mailbox

        async def send_c() -> None:
            await ref.cast("c")
            returned_at.append(trio.current_time())

        nursery.start_soon(send_c)
        await trio.testing.wait_all_tasks_blocked()
        assert returned_at == []
        assert ref.statistics().waiting_senders == 1
        await trio.sleep(30)
        await ref.stop()
    assert returned_at == [10.0]  # room appeared when "b" was taken at t=10
    assert [(h.message, h.time) for h in actor.handled] == [("a", 0.0), ("b", 10.0), ("c", 20.0)]


async def test_cast_nowait_on_a_full_mailbox_raises_mailbox_full() -> None:
    gate = trio.Event()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Blocker(gate), mailbox_size=2)
        await ref.cast("hold")
        await trio.testing.wait_all_tasks_blocked()
        ref.cast_nowait(1)
        ref.cast_nowait(2)
        with pytest.raises(MailboxFull) as info:
            ref.cast_nowait(3)
        assert (info.value.actor, info.value.capacity) == (ref.name, 2)
        gate.set()
        assert await ref.call("seen") == ["hold", 1, 2]
        await ref.stop()


class Blocker(Actor):
    """Blocks on ``gate`` while handling ``"hold"``; answers calls with what it saw."""

    def __init__(self, gate: trio.Event) -> None:
        self.gate = gate
        self.seen: list[object] = []

    async def handle_cast(self, message: object) -> None:
        self.seen.append(message)
        if message == "hold":
            await self.gate.wait()

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        return list(self.seen)


async def test_sending_to_an_exited_actor_fails_immediately(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor())
        await ref.stop()
    with pytest.raises(ActorGone):
        await ref.cast("late")
    with pytest.raises(ActorGone):
        ref.cast_nowait("late")
    with pytest.raises(ActorGone):
        ref.send_info("late")
    assert trio.current_time() == 0.0


async def test_a_cast_waiting_for_space_fails_when_the_actor_exits(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(Script(handle_delay=10)), mailbox_size=1)
        await ref.cast("busy")
        await trio.testing.wait_all_tasks_blocked()
        await ref.cast("queued")

        async def stop_later() -> None:
            await trio.sleep(3)
            await ref.stop()

        nursery.start_soon(stop_later)
        with pytest.raises(ActorGone):
            await ref.cast("blocked")
        assert trio.current_time() == 3.0
    assert ref.statistics().dropped == 1  # "queued"


async def test_two_actors_casting_into_each_others_full_mailboxes_do_not_deadlock(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = trio.Event()
    first, second = Flooder(gate), Flooder(gate)
    with trio.fail_after(60):  # a deadlock would end here, not hang
        async with trio.open_nursery() as nursery:
            a = await spawn(nursery, first, mailbox_size=1)
            b = await spawn(nursery, second, mailbox_size=1)
            await a.call(b)
            await b.call(a)
            await a.cast(("flood", 3))
            await b.cast(("flood", 3))
            await trio.testing.wait_all_tasks_blocked()  # both wait at the gate
            a.cast_nowait("filler")
            b.cast_nowait("filler")  # both mailboxes now full
            gate.set()
            await trio.testing.wait_all_tasks_blocked()
            received = (await a.call("count"), await b.call("count"))
            overflowed = sorted([a.statistics().overflowed, b.statistics().overflowed])
            await a.stop()
            await b.stop()
    assert received == (4, 4)  # the filler and three floods each
    # Whichever actor blocked first stays blocked until the other finished, so the other's
    # three casts all go past the bound; nothing else ever needs to.
    assert overflowed == [0, 3]
    assert trio.current_time() == 0.0


async def test_a_ring_of_three_full_mailboxes_does_not_deadlock(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gate = trio.Event()
    actors = [Flooder(gate) for _ in range(3)]
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            refs = [await spawn(nursery, actor, mailbox_size=1) for actor in actors]
            for ref, peer in zip(refs, refs[1:] + refs[:1], strict=True):
                await ref.call(peer)
                await ref.cast(("flood", 2))
            await trio.testing.wait_all_tasks_blocked()
            for ref in refs:
                ref.cast_nowait("filler")
            gate.set()
            await trio.testing.wait_all_tasks_blocked()
            received = [await ref.call("count") for ref in refs]
            overflowed = sum(ref.statistics().overflowed for ref in refs)
            for ref in refs:
                await ref.stop()
    assert received == [3, 3, 3]
    assert overflowed >= 1


async def test_send_info_bypasses_the_bound() -> None:
    gate = trio.Event()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Blocker(gate), mailbox_size=1)
        await ref.cast("hold")
        await trio.testing.wait_all_tasks_blocked()
        ref.cast_nowait("fill")
        for n in range(3):
            ref.send_info(n)
        assert ref.statistics().mailbox_length == 4
        gate.set()
        await trio.testing.wait_all_tasks_blocked()
        assert ref.statistics().infos_handled == 3
        await ref.stop()


class SelfCaster(Blocker):
    """Like ``Blocker``; on ``"trigger"`` it casts ``"echo"`` into its own mailbox."""

    async def handle_cast(self, message: object) -> None:
        await super().handle_cast(message)
        if message == "trigger":
            await self.ref.cast("echo")


async def test_an_actor_casting_to_itself_behind_waiting_senders_does_not_deadlock(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Regression: ``full()`` ignored parked senders, so the cycle check was skipped.

    When the loop takes "trigger" it wakes the first waiting sender, which has not run yet;
    the lane has a free slot but a second sender is still queued. The self-cast then queued
    behind that sender, on the mailbox only its own (now blocked) loop empties.
    """
    gate = trio.Event()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            ref = await spawn(nursery, SelfCaster(gate), mailbox_size=1)
            await ref.cast("hold")
            await trio.testing.wait_all_tasks_blocked()
            await ref.cast("trigger")
            for message in ("p1", "p2"):
                nursery.start_soon(ref.cast, message)
                await trio.testing.wait_all_tasks_blocked()
            assert ref.statistics().waiting_senders == 2
            gate.set()
            await trio.testing.wait_all_tasks_blocked()
            seen = await ref.call("seen")
            overflowed = ref.statistics().overflowed
            await ref.stop()
    assert seen == ["hold", "trigger", "echo", "p1", "p2"]
    assert overflowed == 1
    assert trio.current_time() == 0.0
