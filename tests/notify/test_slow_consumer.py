"""The issue's scenario: 100 healthy subscribers and one whose sink never returns.

Publishing once a second (virtual), every healthy subscriber must get every message in order
at the instant its own sink latency allows, as if the stalled one did not exist; the stalled
one must hold a bounded queue, count its drops, and be disconnected with one log record.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

from trimcp.notify import TOOLS_LIST_CHANGED, SlowConsumerPolicy

from ._support import NOTIFY_LOGGER, Recorder, Stalled, notify_records, running_hub

if TYPE_CHECKING:
    import pytest

POLICY = SlowConsumerPolicy(queue_size=16, max_dropped=32, drop_window=60.0)
MESSAGES = 100
# Healthy sinks take 0, 0.25 or 0.5 s per write: slower than instant, faster than the rate.
LATENCIES = (0.0, 0.25, 0.5)


async def test_healthy_subscribers_are_never_delayed_by_a_stalled_one(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=NOTIFY_LOGGER)
    healthy = [Recorder(latency=LATENCIES[n % 3]) for n in range(100)]
    stalled = Stalled()
    async with running_hub(policy=POLICY) as hub:
        stuck = await hub.start_subscription(stalled, on_close=stalled.on_close, label="stuck")
        # Subscribed first, so the fan-out meets it before every healthy subscriber.
        await hub.subscribe(TOOLS_LIST_CHANGED, stuck)
        subs = [await hub.start_subscription(sink) for sink in healthy]
        for sub in subs:
            await hub.subscribe(TOOLS_LIST_CHANGED, sub)
        start = trio.current_time()
        stuck_peak = 0
        for n in range(MESSAGES):
            assert await hub.publish(TOOLS_LIST_CHANGED, n)
            await wait_all_tasks_blocked()
            stuck_peak = max(stuck_peak, stuck.statistics().queued)
            await trio.sleep(1)
        await wait_all_tasks_blocked()
        assert trio.current_time() == start + MESSAGES

        for sink in healthy:
            assert sink.messages == list(range(MESSAGES))
            assert [t - start for t, _ in sink.received] == [n + sink.latency for n in range(100)]
        assert all(sub.statistics().dropped == 0 for sub in subs)

        # The stalled one: message 0 stuck in its sink, 1-16 queued, 17-48 dropped, and the
        # 32nd drop (message 48, published at start + 48) disconnected it.
        assert stalled.closes == ["slow_consumer"]
        assert stalled.cancelled == 1
        stats = stuck.statistics()
        assert (stats.delivered, stats.dropped, stats.peak) == (0, 32, 16)
        assert stuck_peak == 16
        assert stats.closed_by == "slow_consumer"
        (warning,) = notify_records(caplog)
        assert warning.levelno == logging.WARNING
        assert warning.subscription == "stuck"  # type: ignore[attr-defined]  # from extra
        assert "32 dropped messages" in warning.getMessage()

        topic = await hub.statistics(TOOLS_LIST_CHANGED)
        assert topic is not None
        assert (topic.subscribers, topic.published) == (100, MESSAGES)
        assert (topic.dropped_full, topic.slow_consumers, topic.dropped_closed) == (32, 1, 0)
        assert topic.queued == 100 * MESSAGES + 1 + 16
        for sub in subs:
            await sub.close()


async def test_a_burst_larger_than_the_queue_is_absorbed_by_subscribers_that_keep_up() -> None:
    healthy = [Recorder() for _ in range(100)]
    stalled = Stalled()
    async with running_hub(policy=POLICY) as hub:
        stuck = await hub.start_subscription(stalled)
        await hub.subscribe("burst", stuck)
        subs = [await hub.start_subscription(sink) for sink in healthy]
        for sub in subs:
            await hub.subscribe("burst", sub)
        # No pause between messages: each publish waits only for the broadcaster's mailbox.
        for n in range(MESSAGES):
            await hub.publish("burst", n)
        await wait_all_tasks_blocked()
        assert all(sink.messages == list(range(MESSAGES)) for sink in healthy)
        assert all(sub.statistics().peak <= POLICY.queue_size for sub in subs)
        assert await stuck.wait_closed() == "slow_consumer"
        assert stuck.statistics().dropped == POLICY.max_dropped
        for sub in subs:
            await sub.close()
