"""``open_application``: the root supervisor embedded in the caller's own trio program."""

from __future__ import annotations

import signal

import pytest
import trio
import trio.testing

from trimcp.actors import KILLED, SHUTDOWN, whereis
from trimcp.config import ApplicationSettings, SupervisionSettings, SysConfig
from trimcp.errors import RestartIntensityExceeded
from trimcp.supervision import Application, open_application, which_children

from ._scripted import Journal, Script, crash_records, until_given_up, worker

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def live_tasks() -> set[trio.lowlevel.Task]:
    """Every task in this trio run."""
    found: set[trio.lowlevel.Task] = set()

    def walk(task: trio.lowlevel.Task) -> None:
        found.add(task)
        for nursery in task.child_nurseries:
            for child in nursery.child_tasks:
                walk(child)

    root = trio.lowlevel.current_root_task()
    assert root is not None
    walk(root)
    return found


async def test_embedded_application_cancelled_from_outside_stops_in_order(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    before = live_tasks()
    handlers = [signal.getsignal(s) for s in SIGNALS]
    specs = [worker(c, journal, Script(terminate_delay=0.5)) for c in "abc"]
    seen: list[object] = []

    async def users_task(task_status: trio.TaskStatus[Application]) -> None:
        async with open_application(SysConfig(), children=specs) as app:
            # Embedded: no signal handler is installed, the caller keeps its own.
            seen.extend(signal.getsignal(s) for s in SIGNALS)
            task_status.started(app)
            await trio.sleep_forever()

    async with trio.open_nursery() as users_nursery:
        app = await users_nursery.start(users_task)
        assert isinstance(app, Application)
        assert [c.id for c in await which_children(app.supervisor)] == ["a", "b", "c"]
        await trio.sleep(2.0)
        users_nursery.cancel_scope.cancel()

    assert seen == handlers
    assert journal.ids("terminate") == ["c", "b", "a"]
    assert journal.times("terminated") == [2.5, 3.0, 3.5]
    assert journal.ids("init") == ["a", "b", "c"]  # nothing restarted
    assert trio.current_time() == 3.5
    assert app.supervisor.exit_reason == SHUTDOWN
    assert journal.all_stopped()
    assert live_tasks() == before  # nothing left running
    assert crash_records(supervision_log) == []


async def test_root_supervisor_is_named_and_registered(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    config = SysConfig(application=ApplicationSettings(name="my-app"))
    async with open_application(config, children=[worker("a", journal)]) as app:
        assert app.name == "my-app"
        assert app.config is config
        assert app.supervisor.name == "my-app"
        assert whereis("my-app") == app.supervisor
    messages = [r.getMessage() for r in supervision_log.records]
    assert "application my-app started with 1 children" in messages
    assert "application my-app stopped" in messages


async def test_default_config_when_none_is_given(autojump_clock: trio.testing.MockClock) -> None:
    async with open_application() as app:
        assert app.config == SysConfig()
        assert await which_children(app.supervisor) == []


async def test_supervision_settings_set_the_root_intensity(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    config = SysConfig(supervision=SupervisionSettings(intensity=2, period=3.0))
    with pytest.raises(RestartIntensityExceeded) as info:
        async with open_application(
            config, children=[worker("w", journal, Script(crash_after=1.0))]
        ):
            await until_given_up()
    assert trio.current_time() == 3.0  # crashes at 1 and 2 restart; the one at 3 is too many
    assert (info.value.intensity, info.value.period) == (2, 3.0)
    assert journal.all_stopped()


async def test_request_stop_runs_the_ordered_stop(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [worker(c, journal, Script(terminate_delay=1.0)) for c in "ab"]
    async with open_application(children=specs) as app:
        await trio.sleep(1.0)
        app.request_stop()
        assert await app.wait_stopped() == SHUTDOWN
        assert trio.current_time() == 3.0
    assert journal.ids("terminated") == ["b", "a"]


async def test_kill_stops_everything_at_once(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [worker(c, journal, Script(terminate_delay=1.0)) for c in "ab"]
    with trio.fail_after(5.0):
        async with open_application(children=specs) as app:
            await trio.sleep(1.0)
            app.kill()
            assert await app.wait_stopped() == KILLED
    assert trio.current_time() == 1.0
    assert journal.ids("terminate") == []
    assert journal.all_stopped()


async def test_kill_during_the_ordered_stop_cuts_it_short(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    specs = [worker(c, journal, Script(terminate_delay=10.0), shutdown=20.0) for c in "ab"]
    async with open_application(children=specs) as app:
        app.request_stop()
        await trio.sleep(4.0)
        app.kill()
        assert await app.wait_stopped() == KILLED
    assert trio.current_time() == 4.0
    assert journal.ids("terminate") == ["b"]
    assert journal.times("terminate-cancelled") == [4.0]
    assert journal.all_stopped()
