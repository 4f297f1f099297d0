"""SessionManager: creation, lookup, idle expiry, the session limit with eviction, ending."""

from __future__ import annotations

import gc
import math

import pytest
import trio

from trimcp.actors import spawn
from trimcp.errors import SessionLimitReached
from trimcp.sessions import SessionLimits, SessionManager, SessionOptions
from trimcp.transports import memory_stream_pair

from .conftest import ScriptedHandler


class ManagedPair:
    """A memory stream the test can mark busy, with the client end kept."""

    def __init__(self) -> None:
        self.server, self.client = memory_stream_pair()
        self.busy = False
        self.closed = False

    # MessageStream, delegated to the server end.
    async def receive_message(self) -> bytes:
        return await self.server.receive_message()

    def receive_ready(self) -> list[object]:
        return self.server.receive_ready()  # type: ignore[return-value]

    async def send_message(self, data: bytes) -> None:
        await self.server.send_message(data)

    async def send_messages(self, messages: list[bytes]) -> None:
        await self.server.send_messages(messages)

    async def aclose(self) -> None:
        self.closed = True
        await self.server.aclose()


async def _manager(nursery: trio.Nursery, limits: SessionLimits) -> SessionManager:
    manager = SessionManager(
        ScriptedHandler(), SessionOptions(initialization_timeout=math.inf), limits
    )
    await spawn(nursery, manager)
    return manager


async def test_create_lookup_and_end() -> None:
    async with trio.open_nursery() as nursery:
        manager = await _manager(nursery, SessionLimits())
        pair = ManagedPair()
        record = await manager.create_session("s1", pair)  # type: ignore[arg-type]
        assert manager.table.lookup("s1") is record
        assert manager.table.lookup("nope") is None
        assert await manager.end_session("s1")
        assert not await manager.end_session("s1")
        assert pair.closed
        await record.ref.wait_exited()
        assert "s1" not in manager.table
        assert manager.statistics().terminated == 1
        nursery.cancel_scope.cancel()


async def test_idle_sessions_expire_busy_ones_do_not(autojump_clock: object) -> None:
    limits = SessionLimits(idle_timeout=60.0, sweep_interval=10.0)
    async with trio.open_nursery() as nursery:
        manager = await _manager(nursery, limits)
        idle, busy, active = ManagedPair(), ManagedPair(), ManagedPair()
        busy.busy = True
        for name, pair in (("idle", idle), ("busy", busy), ("active", active)):
            await manager.create_session(name, pair)  # type: ignore[arg-type]
        for _ in range(7):
            await trio.sleep(10)
            manager.table.lookup("active")  # a request every 10 s keeps it alive
        assert "idle" not in manager.table
        assert idle.closed
        assert "busy" in manager.table
        assert "active" in manager.table
        assert manager.statistics().expired == 1
        nursery.cancel_scope.cancel()


async def test_expiry_can_be_off(autojump_clock: object) -> None:
    async with trio.open_nursery() as nursery:
        manager = await _manager(nursery, SessionLimits(idle_timeout=math.inf))
        await manager.create_session("s", ManagedPair())  # type: ignore[arg-type]
        await trio.sleep(10 * 24 * 3600)
        assert "s" in manager.table
        nursery.cancel_scope.cancel()


async def test_limit_evicts_least_recently_active_idle_session() -> None:
    async with trio.open_nursery() as nursery:
        manager = await _manager(nursery, SessionLimits(max_sessions=3))
        pairs = {name: ManagedPair() for name in ("a", "b", "c", "d")}
        for name in ("a", "b", "c"):
            await manager.create_session(name, pairs[name])  # type: ignore[arg-type]
        manager.table.lookup("a")  # a is now the most recently active
        pairs["b"].busy = True  # b is busy: never evicted
        await manager.create_session("d", pairs["d"])  # type: ignore[arg-type]
        assert sorted(r.session_id for r in manager.table.records()) == ["a", "b", "d"]
        assert pairs["c"].closed
        assert manager.statistics().evicted == 1
        nursery.cancel_scope.cancel()


async def test_limit_refuses_only_when_every_session_is_busy() -> None:
    async with trio.open_nursery() as nursery:
        manager = await _manager(nursery, SessionLimits(max_sessions=2))
        for name in ("a", "b"):
            pair = ManagedPair()
            pair.busy = True
            await manager.create_session(name, pair)  # type: ignore[arg-type]
        extra = ManagedPair()
        with pytest.raises(SessionLimitReached, match="all 2 sessions are busy"):
            await manager.create_session("c", extra)  # type: ignore[arg-type]
        assert "c" not in manager.table
        assert manager.statistics().refused == 1
        nursery.cancel_scope.cancel()


async def test_a_session_that_ends_by_itself_leaves_the_table() -> None:
    async with trio.open_nursery() as nursery:
        manager = await _manager(nursery, SessionLimits())
        pair = ManagedPair()
        record = await manager.create_session("gone", pair)  # type: ignore[arg-type]
        await pair.client.aclose()  # the peer hangs up: the session's input ends
        await record.ref.wait_exited()
        await trio.testing.wait_all_tasks_blocked()
        assert "gone" not in manager.table
        nursery.cancel_scope.cancel()


async def test_many_abandoned_sessions_never_lock_out_a_new_client() -> None:
    limits = SessionLimits(max_sessions=200)
    async with trio.open_nursery() as nursery:
        manager = await _manager(nursery, limits)
        for number in range(1_000):
            await manager.create_session(f"s{number}", ManagedPair())  # type: ignore[arg-type]
        assert len(manager.table) == 200
        assert manager.statistics().evicted == 800
        await manager.create_session("newcomer", ManagedPair())  # type: ignore[arg-type]
        assert manager.table.lookup("newcomer") is not None
        nursery.cancel_scope.cancel()
    gc.collect()


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="idle_timeout"):
        SessionLimits(idle_timeout=0)
    with pytest.raises(ValueError, match="max_sessions"):
        SessionLimits(max_sessions=0)
    assert SessionLimits(idle_timeout=1800).sweep_every == 60.0
    assert SessionLimits(idle_timeout=20).sweep_every == 5.0
