"""``auto_shutdown`` with ``significant`` children (OTP 24's automatic shutdown)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

from trimcp.actors import SHUTDOWN
from trimcp.supervision import (
    ChildSpec,
    Supervisor,
    open_supervisor,
    terminate_child,
    which_children,
)

from ._scripted import Crash, Journal, Script, crash_records, ref_of, worker

if TYPE_CHECKING:
    import pytest


async def test_any_significant_exit_stops_the_supervisor(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    specs = [
        worker("a", journal),
        worker("sig", journal, Script(exit_after=2.0), restart="transient", significant=True),
        worker("b", journal),
    ]
    async with open_supervisor(specs, auto_shutdown="any_significant") as sup:
        assert await sup.wait_exited() == SHUTDOWN
        assert trio.current_time() == 2.0
    assert journal.ids("terminate") == ["sig", "b", "a"]
    assert journal.times("terminate") == [2.0, 2.0, 2.0]
    assert journal.all_stopped()
    assert crash_records(supervision_log) == []
    assert any("significant child exited" in r.getMessage() for r in supervision_log.records)


async def test_a_restarted_significant_child_does_not_stop_the_supervisor(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    spec = worker("sig", journal, restart="transient", significant=True)
    async with open_supervisor([spec], auto_shutdown="any_significant", intensity=5) as sup:
        ref_of(await which_children(sup), "sig").cast_nowait(Crash())
        await wait_all_tasks_blocked()
        assert sup.alive
        assert ref_of(await which_children(sup), "sig").alive
    assert journal.ids("init") == ["sig", "sig"]


async def test_a_temporary_significant_child_stops_it_even_after_a_crash(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("a", journal),
        worker("tmp", journal, Script(crash_after=1.5), restart="temporary", significant=True),
    ]
    async with open_supervisor(specs, auto_shutdown="any_significant") as sup:
        assert await sup.wait_exited() == SHUTDOWN
    assert trio.current_time() == 1.5
    assert journal.ids("init") == ["a", "tmp"]


async def test_insignificant_exits_never_stop_it(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("sig", journal, restart="transient", significant=True),
        worker("plain", journal, Script(exit_after=1.0), restart="transient"),
    ]
    async with open_supervisor(specs, auto_shutdown="any_significant") as sup:
        await trio.sleep(5.0)
        assert sup.alive
        assert [c.running for c in await which_children(sup)] == [True, False]


async def test_all_significant_waits_for_the_last_significant_child(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("s1", journal, Script(exit_after=1.0), restart="transient", significant=True),
        worker("a", journal),
        worker("s2", journal, Script(exit_after=3.0), restart="temporary", significant=True),
    ]
    async with open_supervisor(specs, auto_shutdown="all_significant") as sup:
        await trio.sleep(2.0)
        assert sup.alive
        assert [c.id for c in await which_children(sup)] == ["s1", "a", "s2"]
        assert await sup.wait_exited() == SHUTDOWN
    assert trio.current_time() == 3.0
    assert journal.ids("terminate") == ["s1", "s2", "a"]


async def test_terminate_child_does_not_trigger_auto_shutdown(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [
        worker("s1", journal, restart="transient", significant=True),
        worker("s2", journal, Script(exit_after=4.0), restart="transient", significant=True),
    ]
    async with open_supervisor(specs, auto_shutdown="all_significant") as sup:
        await terminate_child(sup, "s1")
        await trio.sleep(1.0)
        assert sup.alive
        assert await sup.wait_exited() == SHUTDOWN
    assert trio.current_time() == 4.0


async def test_an_auto_shutdown_nested_supervisor_is_not_restarted_when_transient(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    def session() -> Supervisor:
        return Supervisor(
            [
                worker(
                    "conn", journal, Script(exit_after=1.0), restart="transient", significant=True
                ),
                worker("helper", journal),
            ],
            auto_shutdown="any_significant",
        )

    nested = ChildSpec.for_actor("session", session, kind="supervisor", restart="transient")
    async with open_supervisor([nested, worker("other", journal)]) as top:
        session_ref = ref_of(await which_children(top), "session")
        assert await session_ref.wait_exited() == SHUTDOWN
        await wait_all_tasks_blocked()
        children = await which_children(top)
        assert [(c.id, c.running) for c in children] == [("session", False), ("other", True)]
        assert top.alive
    assert journal.ids("init") == ["conn", "helper", "other"]
    assert journal.ids("terminate") == ["conn", "helper", "other"]
