"""Unique names: register, whereis, unregister, and automatic removal when the actor exits."""

from __future__ import annotations

import pytest
import trio

from trimcp.actors import (
    Registry,
    current_registry,
    register,
    spawn,
    unregister,
    whereis,
)
from trimcp.errors import ActorGone, AlreadyRegistered, NotRegistered
from trimcp.testing import Script, ScriptedActor, ScriptedCrash, spawn_unlinked


async def test_each_run_starts_with_an_empty_registry() -> None:
    assert current_registry().registered() == {}
    assert current_registry() is current_registry()


async def test_spawn_with_a_name_registers_it() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor(), name="echo")
        assert ref.name == "echo"
        assert whereis("echo") == ref
        assert current_registry().lookup("echo") == ref
        assert current_registry().registered() == {"echo": ref}
        assert await ref.call("hi") == "hi"
        await ref.stop()
    assert whereis("echo") is None


async def test_a_duplicate_name_fails_the_start_before_init() -> None:
    second = ScriptedActor()
    async with trio.open_nursery() as nursery:
        first = await spawn(nursery, ScriptedActor(), name="echo")
        with pytest.raises(AlreadyRegistered) as info:
            await spawn(nursery, second, name="echo")
        assert info.value.name == "echo"
        assert second.started_at is None  # init never ran
        assert whereis("echo") == first
        await first.stop()


@pytest.mark.parametrize("ending", ["stop", "crash", "kill"])
async def test_the_name_is_removed_on_exit_and_can_be_reused(ending: str) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn_unlinked(
            nursery, ScriptedActor(Script(crash_on={"crash"})), name="worker"
        )
        if ending == "stop":
            await ref.stop()
        elif ending == "crash":
            await ref.cast("crash")
        else:
            ref.kill()
        await ref.wait_exited()
        assert whereis("worker") is None
        successor = await spawn(nursery, ScriptedActor(), name="worker")
        assert whereis("worker") == successor != ref
        await successor.stop()


async def test_a_failed_init_releases_the_name() -> None:
    async with trio.open_nursery() as nursery:
        with pytest.raises(ScriptedCrash):
            await spawn(nursery, ScriptedActor(Script(init_error=ScriptedCrash("init"))), name="w")
        assert whereis("w") is None
        ref = await spawn(nursery, ScriptedActor(), name="w")
        await ref.stop()


async def test_unregister_keeps_the_actor_running() -> None:
    async with trio.open_nursery() as nursery:
        old = await spawn(nursery, ScriptedActor(), name="svc")
        unregister("svc")
        assert whereis("svc") is None
        with pytest.raises(NotRegistered):
            unregister("svc")
        with pytest.raises(NotRegistered):
            current_registry().lookup("svc")
        new = await spawn(nursery, ScriptedActor(), name="svc")
        # The old actor's exit must not remove the name that now belongs to another actor.
        await old.stop()
        assert whereis("svc") == new
        await new.stop()


async def test_register_an_existing_actor_under_extra_names() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ScriptedActor())
        register("alias-1", ref)
        register("alias-2", ref)
        with pytest.raises(AlreadyRegistered):
            register("alias-1", ref)
        assert whereis("alias-1") == whereis("alias-2") == ref
        await ref.stop()
    assert current_registry().registered() == {}
    with pytest.raises(ActorGone):
        register("alias-3", ref)


async def test_a_separate_registry_is_a_separate_namespace() -> None:
    private = Registry()
    async with trio.open_nursery() as nursery:
        mine = await spawn(nursery, ScriptedActor(), name="db", registry=private)
        theirs = await spawn(nursery, ScriptedActor(), name="db")
        assert private.whereis("db") == mine
        assert whereis("db") == theirs
        await mine.stop()
        assert private.registered() == {}
        assert whereis("db") == theirs
        await theirs.stop()
