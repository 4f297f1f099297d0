"""``ScriptedActor``, ``ScriptedFactory`` and ``spawn_unlinked`` do what their scripts say."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import trio
import trio.testing

from trimcp.actors import KILLED, NORMAL, SHUTDOWN, spawn, whereis
from trimcp.errors import ActorGone
from trimcp.testing import (
    Handled,
    Script,
    ScriptedActor,
    ScriptedCrash,
    ScriptedFactory,
    spawn_unlinked,
)


@dataclass(frozen=True)
class Boom:
    pass


async def crash_reason(script: Script, *messages: object) -> ScriptedCrash:
    """Cast ``messages`` to a fresh actor with ``script`` and return what crashed it."""
    async with trio.open_nursery() as nursery:
        ref = await spawn_unlinked(nursery, ScriptedActor(script))
        for message in messages:
            try:
                await ref.cast(message)
            except ActorGone:
                break
        reason = await ref.wait_exited()
    assert isinstance(reason.error, ScriptedCrash)
    return reason.error


async def test_the_default_script_echoes_and_records(
    autojump_clock: trio.testing.MockClock,
) -> None:
    actor = ScriptedActor()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        assert await ref.call("a") == "a"
        await trio.sleep(1)
        await ref.cast("b")
        await trio.testing.wait_all_tasks_blocked()
        ref.send_info("c")
        await trio.testing.wait_all_tasks_blocked()
        await ref.stop()
    assert actor.handled == [
        Handled("call", "a", 0.0),
        Handled("cast", "b", 1.0),
        Handled("info", "c", 1.0),
    ]
    assert actor.messages() == ["a", "b", "c"]
    assert actor.messages("cast") == ["b"]
    assert (actor.started_at, actor.terminate_reason, actor.terminated_at) == (0.0, SHUTDOWN, 1.0)


async def test_replies_from_a_mapping_or_a_callable() -> None:
    async with trio.open_nursery() as nursery:
        table = await spawn_unlinked(nursery, ScriptedActor(Script(replies={"ping": "pong"})))
        computed = await spawn(nursery, ScriptedActor(Script(replies=lambda m: [m, m])))
        assert await table.call("ping") == "pong"
        assert await computed.call(1) == [1, 1]
        with pytest.raises(ActorGone):
            await table.call("unknown")
        assert table.exit_reason is not None
        assert isinstance(table.exit_reason.error, KeyError)
        await computed.stop()


@pytest.mark.parametrize(
    ("crash_on", "fatal"),
    [
        ({"boom"}, "boom"),
        ("boom", "boom"),  # one message, not a collection of characters
        (Boom, Boom()),
        ((Boom, 1), 1),
        (lambda m: m == "o", "o"),
    ],
)
async def test_crash_on_matches_values_types_and_predicates(
    crash_on: object, fatal: object
) -> None:
    sent = ["ok", 1, "o", "boom", Boom()]
    error = await crash_reason(Script(crash_on=crash_on), *sent)  # type: ignore[arg-type]
    assert (error.trigger, error.message) == ("crash_on", fatal)


async def test_crash_after_n_messages() -> None:
    error = await crash_reason(Script(crash_after=2), "a", "b", "c", "d")
    assert (error.trigger, error.message) == ("crash_after", "c")


async def test_crash_at_a_time(autojump_clock: trio.testing.MockClock) -> None:
    error = await crash_reason(Script(crash_at=2.5, init_delay=1))
    assert (error.trigger, error.message) == ("crash_at", None)
    assert trio.current_time() == 3.5


async def test_stop_on_answers_the_call_then_stops() -> None:
    actor = ScriptedActor(Script(stop_on={"bye"}))
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        assert await ref.call("bye") == "bye"
        assert await ref.wait_exited() == NORMAL
        other = await spawn(nursery, ScriptedActor(Script(stop_on={"bye"})))
        await other.cast("bye")
        assert await other.wait_exited() == NORMAL


async def test_delays_are_trio_time(autojump_clock: trio.testing.MockClock) -> None:
    actor = ScriptedActor(Script(init_delay=1, handle_delay=2, reply_delay=3, terminate_delay=4))
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, actor)
        assert trio.current_time() == 1.0
        assert await ref.call("x", timeout=10) == "x"
        assert trio.current_time() == 6.0  # handled for 2 s, answered 3 s later
        await ref.stop()
    assert trio.current_time() == 10.0
    assert actor.terminated_at == 6.0


async def test_init_error_fails_the_start(autojump_clock: trio.testing.MockClock) -> None:
    actor = ScriptedActor(Script(init_error=ValueError("bad config"), init_delay=1))
    async with trio.open_nursery() as nursery:
        with pytest.raises(ValueError, match="bad config"):
            await spawn_unlinked(nursery, actor, name="cfg")
    assert whereis("cfg") is None
    assert actor.started_at is None


async def test_spawn_unlinked_keeps_a_crash_out_of_the_nursery() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn_unlinked(nursery, ScriptedActor(Script(crash_on={"x"})), name="u")
        await ref.cast("x")
        reason = await ref.wait_exited()
        assert isinstance(reason.error, ScriptedCrash)
        # The nursery (and this task) carry on.
        survivor = await spawn(nursery, ScriptedActor())
        assert await survivor.call(1) == 1
        await survivor.stop()


async def test_spawn_unlinked_passes_a_kill_and_a_stop_through() -> None:
    async with trio.open_nursery() as nursery:
        killed = await spawn_unlinked(nursery, ScriptedActor())
        killed.kill()
        stopped = await spawn_unlinked(nursery, ScriptedActor())
        assert await stopped.stop() == SHUTDOWN
    assert killed.exit_reason == KILLED


async def test_factory_counts_builds_and_starts_and_fails_the_next_init() -> None:
    factory = ScriptedFactory(Script(replies={"who": "worker"}))
    with pytest.raises(LookupError):
        _ = factory.latest
    factory.fail_next_init(times=2)
    factory.script_next(Script(replies={"who": "special"}))
    outcomes: list[str] = []
    async with trio.open_nursery() as nursery:
        for _ in range(4):  # what a supervisor's restart loop would do
            try:
                ref = await spawn(nursery, factory())
            except ScriptedCrash as exc:
                outcomes.append(exc.trigger)
                continue
            outcomes.append(str(await ref.call("who")))
            await ref.stop()
    assert outcomes == ["init", "init", "special", "worker"]
    assert (factory.built, factory.started) == (4, 2)
    assert factory.latest is factory.instances[3]
    assert factory.terminate_reasons() == [SHUTDOWN, SHUTDOWN]
    errors = [actor.script.init_error for actor in factory.instances[:2]]
    assert errors[0] is not errors[1]  # each failed start gets its own exception


async def test_fail_next_init_with_a_given_error() -> None:
    error = OSError("port in use")
    factory = ScriptedFactory()
    factory.fail_next_init(error)
    async with trio.open_nursery() as nursery:
        with pytest.raises(OSError, match="port in use"):
            await spawn(nursery, factory())
        ref = await spawn(nursery, factory())
        await ref.stop()
    assert (factory.built, factory.started) == (2, 1)
