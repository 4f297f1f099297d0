"""Crash reports: every abnormal child exit is logged exactly once, with fixed fields.

Like OTP's supervisor reports: the record carries the supervisor, the child id, the reason
(in ``extra``) and the traceback (``exc_info``). Orderly stops log no error.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

from trimcp.errors import RestartIntensityExceeded
from trimcp.supervision import (
    BRUTAL_KILL,
    ChildSpec,
    open_supervisor,
    supervisor_spec,
    terminate_child,
    which_children,
)

from ._scripted import (
    Boom,
    Crash,
    Exit,
    InitFailed,
    Journal,
    Script,
    Worker,
    crash_after,
    crash_records,
    ref_of,
    until_given_up,
    worker,
)

if TYPE_CHECKING:
    from trimcp.actors import ExitReason


def fields(record: logging.LogRecord) -> tuple[str, str]:
    return record.supervisor, record.child_id  # type: ignore[attr-defined]


def assert_complete(record: logging.LogRecord, error_type: type[BaseException]) -> None:
    """The record names the supervisor, child and reason, and carries the traceback."""
    assert isinstance(record.supervisor, str)  # type: ignore[attr-defined]
    assert isinstance(record.child_id, str)  # type: ignore[attr-defined]
    assert error_type.__name__ in record.reason  # type: ignore[attr-defined]
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], error_type)
    assert record.exc_info[2] is not None
    assert record.child_id in record.getMessage()  # type: ignore[attr-defined]


async def test_a_crash_is_logged_once_with_every_field(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    async with open_supervisor([worker("a", journal)], name="sup") as sup:
        ref_of(await which_children(sup), "a").cast_nowait(Crash())
        await wait_all_tasks_blocked()
    (record,) = crash_records(supervision_log)
    assert fields(record) == ("sup", "a")
    assert_complete(record, Boom)
    assert "Traceback" in supervision_log.text
    assert "in _obey" in supervision_log.text  # the child's own frame, not the supervisor's


async def test_every_crash_up_to_giving_up_is_logged_once(
    autojump_clock: trio.testing.MockClock, supervision_log: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(RestartIntensityExceeded):
        async with open_supervisor(
            [ChildSpec("crasher", crash_after, args=(1.0,))], name="sup", intensity=3
        ):
            await until_given_up()
    records = crash_records(supervision_log)
    assert [fields(r) for r in records] == [("sup", "crasher")] * 4
    for record in records:
        assert_complete(record, Boom)
    (gave_up,) = [r for r in supervision_log.records if "restart(s) in" in r.getMessage()]
    assert gave_up.levelno == logging.ERROR
    assert gave_up.reason == "reached_max_restart_intensity"  # type: ignore[attr-defined]


async def test_failed_restarts_are_logged_once_each(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    script = Script(crash_after=1.0, fail_inits={2, 3})
    async with open_supervisor([worker("w", journal, script)], name="sup", intensity=5):
        await trio.sleep(1.5)
    records = crash_records(supervision_log)
    assert len(records) == 3  # the crash, then two failed restarts
    assert_complete(records[0], Boom)
    assert_complete(records[1], InitFailed)
    assert_complete(records[2], InitFailed)


async def test_orderly_exits_and_stops_log_no_error(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    specs = [
        worker("p", journal),
        worker("t", journal, restart="transient"),
        worker("tmp", journal, restart="temporary"),
        worker("brutal", journal, shutdown=BRUTAL_KILL),
    ]
    async with open_supervisor(specs, intensity=5) as sup:
        for child in ("p", "t", "tmp"):
            ref_of(await which_children(sup), child).cast_nowait(Exit())
            await wait_all_tasks_blocked()
        await terminate_child(sup, "p")
    assert supervision_log.records  # debug records exist...
    assert [r for r in supervision_log.records if r.levelno >= logging.WARNING] == []


async def test_a_child_crashing_while_it_is_stopped_is_reported(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    class FailingTerminate(Worker):
        async def terminate(self, reason: ExitReason) -> None:
            raise Boom("terminate failed")

    def build() -> Worker:
        return FailingTerminate("bad", journal, Script())

    async with open_supervisor([ChildSpec.for_actor("bad", build)], name="sup"):
        pass
    (record,) = crash_records(supervision_log)
    assert fields(record) == ("sup", "bad")
    assert_complete(record, Boom)


async def test_a_child_killed_at_its_budget_is_reported_once(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    spec = worker("stuck", journal, Script(terminate_delay=math.inf), shutdown=2.0)
    async with open_supervisor([spec], name="sup"):
        pass
    (record,) = [r for r in supervision_log.records if r.levelno >= logging.WARNING]
    assert record.levelno == logging.ERROR
    assert fields(record) == ("sup", "stuck")
    assert "killed" in record.reason  # type: ignore[attr-defined]
    assert "2 s" in record.getMessage()


async def test_simultaneous_crashes_are_each_logged_once(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    specs = [worker(c, journal, Script(crash_after=1.0)) for c in "abc"]
    async with open_supervisor(specs, strategy="one_for_all", intensity=5):
        await trio.sleep(1.5)
    # However trio interleaves them, each crash that happened is reported, once.
    crashed = journal.ids("crash")
    assert sorted(r.child_id for r in crash_records(supervision_log)) == sorted(crashed)  # type: ignore[attr-defined]
    assert len(crashed) >= 1


async def test_a_nested_supervisor_giving_up_is_a_crash_of_its_parent(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    inner = supervisor_spec(
        "inner", [worker("w", journal, Script(crash_after=1.0))], name="inner-sup"
    )
    async with open_supervisor([inner], name="top", intensity=5):
        await trio.sleep(2.5)
    records = crash_records(supervision_log)
    assert [fields(r) for r in records] == [
        ("inner-sup", "w"),
        ("inner-sup", "w"),
        ("top", "inner"),
    ]
    assert_complete(records[2], RestartIntensityExceeded)


async def test_a_crash_as_the_supervisor_gives_up_is_still_logged(
    autojump_clock: trio.testing.MockClock,
    journal: Journal,
    supervision_log: pytest.LogCaptureFixture,
) -> None:
    specs = [worker(c, journal, Script(crash_after=1.0)) for c in "abc"]
    with pytest.raises(RestartIntensityExceeded):
        async with open_supervisor(specs, intensity=0):
            await until_given_up()
    # The first crash makes the supervisor give up; crashes at the same instant are reported
    # too, although the supervisor never handles their exit notices.
    crashed = journal.ids("crash")
    assert sorted(r.child_id for r in crash_records(supervision_log)) == sorted(crashed)  # type: ignore[attr-defined]
    assert len(crashed) >= 1
