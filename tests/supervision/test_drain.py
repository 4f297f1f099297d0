"""``Drain``: the graceful stop's first phase, on trio's mock clock with scripted participants."""

from __future__ import annotations

import functools
import math
import os
import signal
from dataclasses import dataclass, field

import pytest
import trio
import trio.testing

from trimcp.actors import Actor, spawn
from trimcp.config import ApplicationSettings, SysConfig
from trimcp.supervision import (
    DRAIN,
    DRAINABLE_PHASES,
    DRAINING,
    ChildSpec,
    Drain,
    current_drain,
    open_application,
    open_drain,
    run_application,
    run_until_stopped,
)


@dataclass(eq=False)
class Worker:
    """A participant with ``in_flight`` units; it records what the drain told it."""

    drain: Drain
    in_flight: int = 0
    told: list[str] = field(default_factory=list)

    def begin_drain(self) -> None:
        self.told.append("begin")

    def abort_in_flight(self, reason: str) -> None:
        self.told.append(f"abort: {reason}")
        self.in_flight = 0
        self.drain.changed()

    async def work(self, seconds: float) -> None:
        self.in_flight += 1
        await trio.sleep(seconds)
        self.in_flight -= 1
        self.drain.changed()


async def test_an_idle_drain_finishes_at_once(autojump_clock: trio.testing.MockClock) -> None:
    drain = Drain()
    worker = Worker(drain)
    drain.add(worker)
    assert not drain.draining
    assert await drain.run(10.0)
    assert drain.draining
    assert worker.told == ["begin"]
    assert trio.current_time() == 0.0


async def test_work_in_flight_finishes_before_the_drain_returns(
    autojump_clock: trio.testing.MockClock,
) -> None:
    drain = Drain()
    worker = Worker(drain)
    drain.add(worker)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(worker.work, 2.0)
        nursery.start_soon(worker.work, 3.0)
        await trio.testing.wait_all_tasks_blocked()
        assert drain.in_flight == 2
        assert await drain.run(10.0)
        assert trio.current_time() == 3.0
    assert worker.told == ["begin"]
    assert drain.retry_after == 10


async def test_what_is_left_at_the_timeout_is_aborted(
    autojump_clock: trio.testing.MockClock,
) -> None:
    drain = Drain()
    done, stuck = Worker(drain), Worker(drain)
    drain.add(done)
    drain.add(stuck)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(done.work, 1.0)
        stuck.in_flight = 1  # never finishes by itself
        await trio.testing.wait_all_tasks_blocked()
        assert not await drain.run(4.0)
        nursery.cancel_scope.cancel()
    assert trio.current_time() == 4.0
    assert done.told == ["begin"]  # nothing left to abort there
    assert stuck.told[0] == "begin"
    assert stuck.told[1].startswith("abort: the server is shutting down")
    assert "4 s (application.stop_timeout)" in stuck.told[1]


async def test_abort_waits_a_short_grace_for_the_answers_to_leave(
    autojump_clock: trio.testing.MockClock,
) -> None:
    drain = Drain()

    async def answer_slowly() -> None:
        with drain.track():
            await trio.sleep(100.0)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer_slowly)
        await trio.testing.wait_all_tasks_blocked()
        assert not await drain.run(2.0)
        # 2 s of drain, then at most ABORT_GRACE (1 s) for the answers.
        assert trio.current_time() == 3.0
        nursery.cancel_scope.cancel()


async def test_tracked_work_counts_until_its_block_ends(
    autojump_clock: trio.testing.MockClock,
) -> None:
    drain = Drain()

    async def exchange() -> None:
        with drain.track():
            await trio.sleep(1.5)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(exchange)
        await trio.testing.wait_all_tasks_blocked()
        assert drain.in_flight == 1
        assert await drain.run(5.0)
        assert trio.current_time() == 1.5
        assert drain.in_flight == 0


def test_a_participant_joining_a_drain_under_way_drains_at_once() -> None:
    drain = Drain()
    drain.begin()
    late = Worker(drain)
    drain.add(late)
    assert late.told == ["begin"]
    drain.begin()  # a second begin tells nobody again
    assert late.told == ["begin"]


async def test_a_participant_that_leaves_no_longer_counts(
    autojump_clock: trio.testing.MockClock,
) -> None:
    drain = Drain()
    worker = Worker(drain, in_flight=3)
    drain.add(worker)

    async def leave() -> None:
        await trio.sleep(2.0)
        drain.discard(worker)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(leave)
        assert await drain.run(10.0)
    assert trio.current_time() == 2.0


async def test_no_timeout_waits_as_long_as_it_takes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    drain = Drain()
    worker = Worker(drain)
    drain.add(worker)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(worker.work, 1000.0)
        await trio.testing.wait_all_tasks_blocked()
        assert await drain.run(math.inf)
    assert trio.current_time() == 1000.0
    assert drain.retry_after == 5  # the default, as no budget is known


async def test_the_drain_is_current_inside_its_block_and_its_tasks() -> None:
    assert current_drain() is None
    seen: list[Drain | None] = []
    with open_drain() as drain:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: _record(seen))
        assert seen == [drain]
    assert current_drain() is None


async def _record(seen: list[Drain | None]) -> None:
    seen.append(current_drain())


class Drainer(Actor):
    """An actor with the drainable phase table."""

    phase_table = DRAINABLE_PHASES

    def __init__(self, drain_in_init: bool = False) -> None:
        self.drain_in_init = drain_in_init

    async def init(self) -> None:
        if self.drain_in_init:
            self.transition(DRAIN)


async def test_the_draining_phase_goes_from_operation_to_shutdown() -> None:
    async with trio.open_nursery() as nursery:
        actor = Drainer()
        ref = await spawn(nursery, actor)
        assert actor.transition(DRAIN) is DRAINING
        assert actor.transition(DRAIN) is DRAINING  # idempotent
        ref.request_stop()
        await ref.wait_exited()
        # An actor told to drain while it starts stays draining once started.
        early = Drainer(drain_in_init=True)
        ref = await spawn(nursery, early)
        assert early.phase is DRAINING
        ref.request_stop()


async def test_the_application_drains_then_stops(
    autojump_clock: trio.testing.MockClock,
) -> None:
    config = SysConfig(application=ApplicationSettings(stop_timeout=7.0))
    async with open_application(config) as app:
        assert current_drain() is app.drain
        worker = Worker(app.drain)
        app.drain.add(worker)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(worker.work, 2.0)
            await trio.testing.wait_all_tasks_blocked()
            assert await app.stop_gracefully()
        assert trio.current_time() == 2.0
        await app.wait_stopped()
    assert worker.told == ["begin"]


@pytest.mark.parametrize("timeout", [0.5, 3.0])
async def test_stop_gracefully_takes_its_own_timeout(
    autojump_clock: trio.testing.MockClock, timeout: float
) -> None:
    async with open_application(SysConfig()) as app:
        stuck = Worker(app.drain, in_flight=1)
        app.drain.add(stuck)
        assert not await app.stop_gracefully(timeout)
        assert trio.current_time() == timeout
        await app.wait_stopped()


async def _serve_with_work(seconds: float, workers: list[Worker]) -> None:
    drain = current_drain()
    assert drain is not None
    worker = Worker(drain)
    drain.add(worker)
    workers.append(worker)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(worker.work, seconds)
        await trio.sleep_forever()


async def test_run_until_stopped_drains_on_sigterm_then_cancels(
    autojump_clock: trio.testing.MockClock,
) -> None:
    workers: list[Worker] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            functools.partial(run_until_stopped, functools.partial(_serve_with_work, 2.0, workers))
        )
        await trio.testing.wait_all_tasks_blocked()
        os.kill(os.getpid(), signal.SIGTERM)
    assert trio.current_time() == 2.0  # the work finished, then serve was cancelled
    assert workers[0].told == ["begin"]


async def test_run_until_stopped_stops_at_once_on_a_second_signal(
    autojump_clock: trio.testing.MockClock,
) -> None:
    workers: list[Worker] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            functools.partial(
                run_until_stopped,
                functools.partial(_serve_with_work, 1000.0, workers),
                stop_timeout=500.0,
            )
        )
        await trio.testing.wait_all_tasks_blocked()
        os.kill(os.getpid(), signal.SIGTERM)
        await trio.sleep(1.0)
        os.kill(os.getpid(), signal.SIGINT)
    assert trio.current_time() == pytest.approx(1.0)


async def test_run_until_stopped_returns_when_serve_returns() -> None:
    served: list[bool] = []

    async def serve() -> None:
        served.append(current_drain() is not None)

    await run_until_stopped(serve)
    assert served == [True]


async def test_run_application_drains_before_the_ordered_stop(
    autojump_clock: trio.testing.MockClock,
) -> None:
    log: list[tuple[str, float]] = []
    workers: list[Worker] = []

    async def child() -> None:
        try:
            await _serve_with_work(3.0, workers)
        finally:
            log.append(("child stopped", trio.current_time()))

    config = SysConfig(application=ApplicationSettings(stop_timeout=10.0))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            functools.partial(run_application, config, children=[ChildSpec("worker", child)])
        )
        await trio.testing.wait_all_tasks_blocked()
        os.kill(os.getpid(), signal.SIGTERM)
    # The child kept running until its work was done (3 s), then the ordered stop ran.
    assert log == [("child stopped", 3.0)]
    assert workers[0].told == ["begin"]
