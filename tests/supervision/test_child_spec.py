"""``ChildSpec`` defaults and validation, and the supervisor flags' validation."""

from __future__ import annotations

import functools
import math
from typing import Any

import pytest
import trio
import trio.testing

from trimcp.actors import whereis
from trimcp.errors import InvalidChildSpec, SupervisorError
from trimcp.supervision import (
    BRUTAL_KILL,
    ChildSpec,
    Supervisor,
    open_supervisor,
    supervisor_spec,
    which_children,
)

from ._scripted import Crash, Journal, Script, Worker, crash_after, ref_of, worker


async def takes_status(task_status: trio.TaskStatus[object] = trio.TASK_STATUS_IGNORED) -> None:
    task_status.started()


async def takes_kwargs(**kwargs: Any) -> None:
    await trio.lowlevel.checkpoint()


def test_defaults_are_otps() -> None:
    spec = ChildSpec("a", crash_after, args=(1.0,))
    assert spec.restart == "permanent"
    assert spec.shutdown == 5.0
    assert spec.shutdown_seconds == 5.0
    assert spec.significant is False
    assert spec.kind == "worker"
    assert spec.args == (1.0,)


def test_a_supervisor_child_waits_as_long_as_it_takes_by_default() -> None:
    spec = ChildSpec("sup", crash_after, kind="supervisor")
    assert spec.shutdown == math.inf
    assert supervisor_spec("nested", []).shutdown == math.inf
    assert supervisor_spec("nested", []).kind == "supervisor"


def test_brutal_kill_has_no_budget() -> None:
    spec = ChildSpec("a", crash_after, shutdown=BRUTAL_KILL)
    assert spec.shutdown == "brutal_kill"
    assert spec.shutdown_seconds == 0.0


@pytest.mark.parametrize("shutdown", [0, 0.0, 2, 2.5, math.inf])
def test_shutdown_accepts_seconds_and_infinity(shutdown: float) -> None:
    assert ChildSpec("a", crash_after, shutdown=shutdown).shutdown_seconds == shutdown


def test_spec_is_frozen_and_compares_by_value() -> None:
    spec = ChildSpec("a", crash_after)
    with pytest.raises(AttributeError):
        spec.restart = "temporary"  # type: ignore[misc]
    assert spec == ChildSpec("a", crash_after)


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        (crash_after, False),
        (takes_status, True),
        (takes_kwargs, True),
        (functools.partial(crash_after, 1.0), False),
        (functools.partial(takes_status), True),
    ],
)
def test_task_status_is_detected_once(start: Any, expected: bool) -> None:
    assert ChildSpec("a", start).takes_task_status is expected


async def test_for_actor_builds_a_fresh_actor_for_every_start(
    autojump_clock: trio.testing.MockClock,
) -> None:
    journal = Journal()
    built: list[Worker] = []

    def factory() -> Worker:
        built.append(Worker("a", journal, Script()))
        return built[-1]

    spec = ChildSpec.for_actor("a", factory, name="the-a", restart="transient", shutdown=1.0)
    assert (spec.restart, spec.shutdown, spec.takes_task_status) == ("transient", 1.0, True)
    assert built == []  # nothing is built until a supervisor starts it
    async with open_supervisor([spec]) as sup:
        first = whereis("the-a")  # registered under ``name`` while it runs
        assert first is not None
        first.cast_nowait(Crash())
        await trio.testing.wait_all_tasks_blocked()
        second = whereis("the-a")
        assert second != first
        assert ref_of(await which_children(sup), "a") == second
    assert len(built) == 2
    assert built[0] is not built[1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"id": ""}, "non-empty id"),
        ({"restart": "sometimes"}, "restart must be"),
        ({"kind": "manager"}, "kind must be"),
        ({"shutdown": -1}, "shutdown must be"),
        ({"shutdown": math.nan}, "shutdown must be"),
        ({"shutdown": True}, "shutdown must be"),
        ({"shutdown": "5"}, "shutdown must be"),
        ({"shutdown": "kill"}, "shutdown must be"),
        ({"significant": True}, "significant child must be"),
        ({"significant": True, "restart": "permanent"}, "significant child must be"),
        ({"start": "not callable"}, "start must be"),
    ],
)
def test_invalid_specs_are_refused(kwargs: dict[str, Any], message: str) -> None:
    fields: dict[str, Any] = {"id": "a", "start": crash_after} | kwargs
    child_id, start = fields.pop("id"), fields.pop("start")
    with pytest.raises(InvalidChildSpec, match=message) as info:
        ChildSpec(child_id, start, **fields)
    assert isinstance(info.value, SupervisorError)


@pytest.mark.parametrize("restart", ["transient", "temporary"])
def test_significant_needs_transient_or_temporary(restart: Any) -> None:
    assert ChildSpec("a", crash_after, restart=restart, significant=True).significant


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"strategy": "one_for_some"}, "strategy must be"),
        ({"auto_shutdown": "sometimes"}, "auto_shutdown must be"),
        ({"intensity": -1}, "intensity must be"),
        ({"intensity": 1.5}, "intensity must be"),
        ({"intensity": True}, "intensity must be"),
        ({"period": 0}, "period must be"),
        ({"period": -5.0}, "period must be"),
        ({"period": False}, "period must be"),
        ({"period": "5"}, "period must be"),
    ],
)
def test_invalid_flags_are_refused(flags: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidChildSpec, match=message):
        Supervisor([], **flags)


def test_duplicate_ids_are_refused() -> None:
    journal = Journal()
    with pytest.raises(InvalidChildSpec, match="duplicate child ids: a"):
        Supervisor([worker("a", journal), worker("b", journal), worker("a", journal)])


@pytest.mark.parametrize("count", [0, 2])
def test_simple_one_for_one_takes_exactly_one_template(count: int) -> None:
    journal = Journal()
    specs = [worker(f"t{i}", journal) for i in range(count)]
    with pytest.raises(InvalidChildSpec, match="exactly one child spec"):
        Supervisor(specs, strategy="simple_one_for_one")


def test_significant_child_needs_auto_shutdown() -> None:
    journal = Journal()
    spec = worker("a", journal, restart="transient", significant=True)
    with pytest.raises(InvalidChildSpec, match="auto_shutdown is 'never'"):
        Supervisor([spec])
    Supervisor([spec], auto_shutdown="any_significant")
    Supervisor([spec], auto_shutdown="all_significant")


def test_valid_flags_are_accepted() -> None:
    Supervisor([], strategy="rest_for_one", intensity=0, period=0.5)
    Supervisor([], strategy="one_for_all", intensity=10, period=60)
