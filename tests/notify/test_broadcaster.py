"""One topic's ``Broadcaster``: fan-out order, filters, links with subscriptions, lingering."""

from __future__ import annotations

import math

import pytest
import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

from trimcp.actors import NORMAL, spawn
from trimcp.errors import ActorGone, MailboxFull
from trimcp.notify import (
    Broadcaster,
    SlowConsumerPolicy,
    publish,
    publish_nowait,
    spawn_subscription,
    subscribe,
    topic_statistics,
    unsubscribe,
)
from trimcp.testing import spawn_unlinked

from ._support import Recorder, Stalled


async def test_every_subscriber_gets_every_message_in_publish_order() -> None:
    sinks = [Recorder() for _ in range(5)]
    async with trio.open_nursery() as nursery:
        topic = await spawn(nursery, Broadcaster("t", linger=math.inf))
        subs = [await spawn_subscription(nursery, sink) for sink in sinks]
        for sub in subs:
            assert await subscribe(topic, sub)
        for n in range(20):
            await publish(topic, n)
        await wait_all_tasks_blocked()
        assert all(sink.messages == list(range(20)) for sink in sinks)
        stats = await topic_statistics(topic)
        assert (stats.topic, stats.subscribers, stats.published, stats.queued) == ("t", 5, 20, 100)
        nursery.cancel_scope.cancel()


async def test_subscribe_twice_replaces_the_filter() -> None:
    sink = Recorder()
    async with trio.open_nursery() as nursery:
        topic = await spawn(nursery, Broadcaster("log", linger=math.inf))
        sub = await spawn_subscription(nursery, sink)
        assert await subscribe(topic, sub, filter=lambda m: m == "error")
        for level in ("debug", "error"):
            await publish(topic, level)
        assert not await subscribe(topic, sub, filter=lambda m: m != "debug")
        for level in ("debug", "info", "error"):
            await publish(topic, level)
        await wait_all_tasks_blocked()
        assert sink.messages == ["error", "info", "error"]
        stats = await topic_statistics(topic)
        assert (stats.subscribers, stats.filtered, stats.queued) == (1, 2, 3)
        nursery.cancel_scope.cancel()


async def test_unsubscribed_subscriptions_get_nothing_more() -> None:
    stays, leaves = Recorder(), Recorder()
    async with trio.open_nursery() as nursery:
        topic = await spawn(nursery, Broadcaster("t", linger=math.inf))
        kept = await spawn_subscription(nursery, stays)
        gone = await spawn_subscription(nursery, leaves)
        await subscribe(topic, kept)
        await subscribe(topic, gone)
        await publish(topic, 1)
        assert await unsubscribe(topic, gone)
        assert not await unsubscribe(topic, gone)
        await publish(topic, 2)
        await wait_all_tasks_blocked()
        assert (stays.messages, leaves.messages) == ([1, 2], [1])
        assert gone.open  # unsubscribing leaves the subscription itself alone
        assert (await topic_statistics(topic)).subscribers == 1
        nursery.cancel_scope.cancel()


async def test_a_subscription_that_ends_vanishes_from_the_topic() -> None:
    async with trio.open_nursery() as nursery:
        topic = await spawn(nursery, Broadcaster("t", linger=math.inf))
        subs = [await spawn_subscription(nursery, Recorder()) for _ in range(3)]
        for sub in subs:
            await subscribe(topic, sub)
        await subs[1].close()
        await wait_all_tasks_blocked()
        assert (await topic_statistics(topic)).subscribers == 2
        # Subscribing one that already ended is accepted and forgotten at once.
        assert await subscribe(topic, subs[1])
        await wait_all_tasks_blocked()
        assert (await topic_statistics(topic)).subscribers == 2
        await publish(topic, "x")
        stats = await topic_statistics(topic)
        assert (stats.queued, stats.dropped_closed) == (2, 0)
        nursery.cancel_scope.cancel()


async def test_offers_to_a_closing_subscription_count_as_dropped_closed() -> None:
    sink = Stalled()
    async with trio.open_nursery() as nursery:
        topic = await spawn(nursery, Broadcaster("t", linger=math.inf))
        sub = await spawn_subscription(nursery, sink)
        await subscribe(topic, sub)
        sub.request_close()  # closing, not yet gone: the topic has not heard of it
        publish_nowait(topic, "x")
        await wait_all_tasks_blocked()
        stats = await topic_statistics(topic)
        assert (stats.dropped_closed, stats.subscribers) == (1, 0)
        nursery.cancel_scope.cancel()


async def test_a_stalled_subscriber_costs_the_others_nothing() -> None:
    policy = SlowConsumerPolicy(queue_size=2, max_dropped=3)
    healthy = [Recorder() for _ in range(10)]
    stalled = Stalled()
    async with trio.open_nursery() as nursery:
        topic = await spawn(nursery, Broadcaster("t", linger=math.inf))
        stuck = await spawn_subscription(nursery, stalled, policy=policy)
        await subscribe(topic, stuck)  # first in fan-out order
        for sink in healthy:
            await subscribe(topic, await spawn_subscription(nursery, sink, policy=policy))
        for n in range(10):
            await publish(topic, n)
            await wait_all_tasks_blocked()
        assert all(sink.messages == list(range(10)) for sink in healthy)
        assert await stuck.wait_closed() == "slow_consumer"
        stats = await topic_statistics(topic)
        # 0 in the sink, 1 and 2 queued, 3-5 dropped (the third gives up), 6-9 not offered.
        assert (stats.dropped_full, stats.slow_consumers, stats.subscribers) == (3, 1, 10)
        assert stats.queued == 3 + 10 * 10
        nursery.cancel_scope.cancel()


async def test_an_empty_topic_stops_after_lingering(autojump_clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        topic = await spawn(nursery, Broadcaster("t", linger=5.0))
        await trio.sleep(3)
        sub = await spawn_subscription(nursery, Recorder())
        await subscribe(topic, sub)  # disarms the timer armed at start
        await trio.sleep(10)
        assert topic.alive
        await unsubscribe(topic, sub)  # t=13: armed again
        await trio.sleep(4)
        await subscribe(topic, sub)
        await unsubscribe(topic, sub)  # t=17: the timer armed at 13 is stale now
        assert await topic.wait_exited() == NORMAL
        assert trio.current_time() == 22
        with pytest.raises(ActorGone):
            await publish(topic, "late")
        await sub.close()


async def test_a_topic_started_for_a_subscriber_accepts_it_before_lingering(
    autojump_clock: trio.testing.MockClock,
) -> None:
    sink = Recorder()
    async with trio.open_nursery() as nursery:
        sub = await spawn_subscription(nursery, sink)
        topic = await spawn(nursery, Broadcaster("t", linger=0.0, first=sub))
        await trio.sleep(1)
        await publish(topic, "x")
        await wait_all_tasks_blocked()
        assert sink.messages == ["x"]
        await sub.close()
        assert await topic.wait_exited() == NORMAL
        assert trio.current_time() == 1


async def test_a_topic_that_crashes_ends_its_subscriptions() -> None:
    sinks = [Recorder() for _ in range(3)]

    def broken_filter(message: object) -> bool:
        raise RuntimeError("filter bug")

    async with trio.open_nursery() as nursery:
        topic = await spawn_unlinked(nursery, Broadcaster("t", linger=math.inf))
        subs = [await spawn_subscription(nursery, sink, on_close=sink.on_close) for sink in sinks]
        for sub in subs[:2]:
            await subscribe(topic, sub)
        await subscribe(topic, subs[2], filter=broken_filter)
        await publish(topic, "x")
        reason = await topic.wait_exited()
        assert isinstance(reason.error, RuntimeError)
        assert [await sub.wait_closed() for sub in subs] == ["topic_ended"] * 3
    assert [sink.closes for sink in sinks] == [["topic_ended"]] * 3


async def test_publish_nowait_refuses_when_the_broadcaster_is_behind() -> None:
    async with trio.open_nursery() as nursery:
        topic = await spawn(nursery, Broadcaster("t", linger=math.inf), mailbox_size=2)
        publish_nowait(topic, 1)
        publish_nowait(topic, 2)
        with pytest.raises(MailboxFull):
            publish_nowait(topic, 3)
        await wait_all_tasks_blocked()
        assert (await topic_statistics(topic)).published == 2
        nursery.cancel_scope.cancel()


def test_linger_must_be_seconds() -> None:
    with pytest.raises(ValueError, match="linger"):
        Broadcaster("t", linger=-1.0)
    with pytest.raises(ValueError, match="linger"):
        Broadcaster("t", linger=math.nan)
