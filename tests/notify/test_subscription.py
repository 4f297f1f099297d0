"""One ``Subscription``: ordered delivery, non-blocking offers, the slow-consumer policy, ends."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

from trimcp.actors import NORMAL, SHUTDOWN
from trimcp.errors import TransportClosed
from trimcp.notify import SlowConsumerPolicy, SubscriptionRef, spawn_subscription

from ._support import NOTIFY_LOGGER, Failing, Recorder, Stalled, notify_records

SMALL = SlowConsumerPolicy(queue_size=3, max_dropped=4, drop_window=10.0)


@pytest.fixture
def notify_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger=NOTIFY_LOGGER)
    return caplog


async def test_messages_reach_the_sink_in_offer_order() -> None:
    sink = Recorder()
    async with trio.open_nursery() as nursery:
        sub = await spawn_subscription(nursery, sink, label="session-1")
        assert all(sub.offer(n) for n in range(10))
        await wait_all_tasks_blocked()
        assert sink.messages == list(range(10))
        stats = sub.statistics()
        assert (stats.delivered, stats.dropped, stats.queued) == (10, 0, 0)
        assert (stats.label, stats.capacity, stats.closed_by) == ("session-1", 256, None)
        assert sub.open
        await sub.close()


async def test_a_full_queue_drops_and_counts_without_blocking_the_offerer() -> None:
    sink = Stalled()
    async with trio.open_nursery() as nursery:
        sub = await spawn_subscription(nursery, sink, policy=SMALL)
        assert sub.offer("in the sink")
        await wait_all_tasks_blocked()
        assert sink.writing == ["in the sink"]
        assert [sub.offer(n) for n in range(5)] == [True, True, True, False, False]
        stats = sub.statistics()
        assert (stats.queued, stats.peak, stats.dropped, stats.delivered) == (3, 3, 2, 0)
        assert sub.open
        # A consumer that catches up gets the queued messages in order; drops are gone.
        sink.resume()
        await wait_all_tasks_blocked()
        assert sink.received == ["in the sink", 0, 1, 2]
        assert sub.statistics().delivered == 4
        await sub.close()


async def test_a_stalled_consumer_is_disconnected_after_max_dropped_and_logged_once(
    notify_log: pytest.LogCaptureFixture,
) -> None:
    sink = Stalled()
    async with trio.open_nursery() as nursery:
        sub = await spawn_subscription(nursery, sink, policy=SMALL, on_close=sink.on_close)
        sub.offer("stuck")
        await wait_all_tasks_blocked()
        outcomes = [sub.offer_outcome(n) for n in range(3 + 4)]
        assert outcomes == ["queued"] * 3 + ["dropped"] * 3 + ["gave_up"]
        assert not sub.open
        # Once it gave up, offers are refused and no longer counted as drops.
        assert sub.offer_outcome("late") == "closed"
        assert await sub.wait_closed() == "slow_consumer"
    assert sink.closes == ["slow_consumer"]
    assert sink.cancelled == 1  # the stuck write was abandoned, not waited for
    assert sub.ref.exit_reason == SHUTDOWN  # orderly: no supervisor crash report
    stats = sub.statistics()
    assert (stats.dropped, stats.delivered, stats.queued, stats.peak) == (4, 0, 0, 3)
    assert stats.closed_by == "slow_consumer"
    warnings = notify_records(notify_log)
    assert len(warnings) == 1
    assert "slow consumer" in warnings[0].getMessage()
    assert warnings[0].cause == "slow_consumer"  # type: ignore[attr-defined]  # from extra


async def test_drops_spread_wider_than_the_window_never_disconnect(
    autojump_clock: trio.testing.MockClock,
) -> None:
    policy = SlowConsumerPolicy(queue_size=1, max_dropped=3, drop_window=10.0)
    sink = Stalled()
    async with trio.open_nursery() as nursery:
        sub = await spawn_subscription(nursery, sink, policy=policy)
        sub.offer("stuck")
        await wait_all_tasks_blocked()
        sub.offer("queued")
        for _ in range(10):
            assert [sub.offer_outcome(n) for n in range(2)] == ["dropped", "dropped"]
            await trio.sleep(10)  # the window closes before a third drop
        assert sub.open
        assert sub.statistics().dropped == 20
        await trio.sleep(5)
        assert [sub.offer_outcome(n) for n in range(3)] == ["dropped", "dropped", "gave_up"]
        assert await sub.wait_closed() == "slow_consumer"
    assert trio.current_time() == 105


@pytest.mark.parametrize(
    "error", [trio.ClosedResourceError(), trio.BrokenResourceError(), TransportClosed()]
)
async def test_a_sink_whose_stream_closed_ends_the_subscription_quietly(
    error: Exception, notify_log: pytest.LogCaptureFixture
) -> None:
    sink = Failing(error, after=2)
    async with trio.open_nursery() as nursery:
        sub = await spawn_subscription(nursery, sink, on_close=sink.on_close)
        for n in range(5):
            sub.offer(n)
        assert await sub.wait_closed() == "sink_failed"
    assert sink.received == [0, 1]
    assert sink.closes == ["sink_failed"]
    assert sub.ref.exit_reason == NORMAL
    assert sub.statistics().delivered == 2
    assert notify_records(notify_log) == []  # routine: DEBUG only


async def test_a_sink_that_fails_otherwise_is_logged_once_with_its_traceback(
    notify_log: pytest.LogCaptureFixture,
) -> None:
    sink = Failing(ValueError("bad encoding"))
    async with trio.open_nursery() as nursery:
        sub = await spawn_subscription(nursery, sink, on_close=sink.on_close)
        for n in range(5):
            sub.offer(n)
        assert await sub.wait_closed() == "sink_failed"
    assert sub.ref.exit_reason == NORMAL
    (record,) = notify_records(notify_log)
    assert record.levelno == logging.WARNING
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], ValueError)


async def test_close_cancels_a_stuck_write_discards_the_queue_and_reports_closed() -> None:
    sink = Stalled()
    async with trio.open_nursery() as nursery:
        sub = await spawn_subscription(nursery, sink, on_close=sink.on_close)
        for n in range(4):
            sub.offer(n)
        await wait_all_tasks_blocked()
        assert await sub.close() == "closed"
        sub.request_close()  # idempotent
        assert await sub.close() == "closed"
    assert sink.closes == ["closed"]
    assert sink.cancelled == 1
    assert sub.statistics().closed_by == "closed"
    assert not sub.offer("after")
    assert sub.ref.statistics().dropped == 3  # queued at close: discarded by the runtime


async def test_cancelling_its_nursery_is_a_shutdown() -> None:
    sink = Recorder()
    async with trio.open_nursery() as nursery:
        sub = await spawn_subscription(nursery, sink, on_close=sink.on_close)
        nursery.cancel_scope.cancel()
    assert sink.closes == ["shutdown"]
    assert await sub.wait_closed() == "shutdown"


async def test_handles_compare_by_subscription() -> None:
    async with trio.open_nursery() as nursery:
        first = await spawn_subscription(nursery, Recorder(), label="a")
        second = await spawn_subscription(nursery, Recorder())
        again = SubscriptionRef(first.ref, first._account)
        assert first == again
        assert hash(first) == hash(again)
        assert first != second
        assert first != first.ref
        assert repr(first) == f"<SubscriptionRef {first.name} 'a' (open)>"
        await first.close()
        assert repr(first) == f"<SubscriptionRef {first.name} 'a' (closed)>"
        await second.close()
