"""``NotificationHub``: its subtree, topics on demand and gone when idle, subscriptions' ends."""

from __future__ import annotations

import math

import pytest
import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

from trimcp.actors import Registry, current_registry
from trimcp.errors import NotRegistered
from trimcp.notify import (
    TOOLS_LIST_CHANGED,
    NotificationHub,
    SlowConsumerPolicy,
    resource_topic,
)
from trimcp.supervision import open_supervisor, which_children
from trimcp.testing import Script, ScriptedActor, spawn_unlinked

from ._support import Recorder, running_hub


async def test_the_subtree_is_named_and_shaped_as_documented() -> None:
    async with running_hub(name="fanout") as hub:
        registry = current_registry()
        names = set(registry.registered())
        assert {"fanout", "fanout.topics", "fanout.subscriptions"} <= names
        top = [(c.id, c.kind, c.restart) for c in await which_children(registry.lookup("fanout"))]
        assert top == [
            ("topics", "supervisor", "permanent"),
            ("subscriptions", "supervisor", "permanent"),
        ]
        sub = await hub.start_subscription(Recorder())
        await hub.subscribe("t", sub)
        (topic,) = await which_children(registry.lookup("fanout.topics"))
        (child,) = await which_children(registry.lookup("fanout.subscriptions"))
        assert (topic.restart, child.restart) == ("temporary", "temporary")
        assert topic.value == hub.whereis("t") == registry.whereis("fanout.topic:t")
        assert child.value == sub.ref
        await sub.close()


async def test_publishing_to_a_topic_nobody_subscribed_starts_nothing() -> None:
    async with running_hub() as hub:
        assert not await hub.publish(resource_topic("file:///a"), "updated")
        assert not hub.publish_nowait(TOOLS_LIST_CHANGED, "changed")
        assert hub.topics() == []
        assert await hub.statistics(TOOLS_LIST_CHANGED) is None
        assert not await hub.unsubscribe(
            TOOLS_LIST_CHANGED, await hub.start_subscription(Recorder())
        )


async def test_messages_flow_from_publishers_to_subscribed_streams() -> None:
    tools, updates = Recorder(), Recorder()
    async with running_hub() as hub:
        async with (
            hub.open_subscription(tools, topics=[TOOLS_LIST_CHANGED]),
            hub.open_subscription(updates, topics=[resource_topic("file:///a")]),
        ):
            assert hub.publish_nowait(TOOLS_LIST_CHANGED, "tools changed")
            assert await hub.publish(resource_topic("file:///a"), "a updated")
            assert not await hub.publish(resource_topic("file:///b"), "b updated")
            await wait_all_tasks_blocked()
            assert hub.topics() == [resource_topic("file:///a"), TOOLS_LIST_CHANGED]
            stats = await hub.statistics(TOOLS_LIST_CHANGED)
            assert stats is not None
            assert (stats.subscribers, stats.published, stats.queued) == (1, 1, 1)
        assert (tools.messages, updates.messages) == (["tools changed"], ["a updated"])


async def test_idle_per_uri_topics_are_removed(autojump_clock: trio.testing.MockClock) -> None:
    uris = [f"file:///doc/{n}" for n in range(50)]
    async with running_hub(linger=5.0) as hub:
        sub = await hub.start_subscription(Recorder())
        for uri in uris:
            await hub.subscribe(resource_topic(uri), sub)
        assert len(hub.topics()) == 50
        subscribed_at = trio.current_time()
        for uri in uris[:49]:
            await hub.unsubscribe(resource_topic(uri), sub)
        await trio.sleep(5)
        await wait_all_tasks_blocked()  # the timers fire at this very instant too
        assert hub.topics() == [resource_topic(uris[-1])]
        # The last one goes when its only subscription ends (the stream detached).
        await sub.close()
        await trio.sleep(5)
        await wait_all_tasks_blocked()
        assert hub.topics() == []
        assert trio.current_time() == subscribed_at + 10
        pool = current_registry().lookup("notify.topics")
        assert await which_children(pool) == []


async def test_a_topic_started_without_subscribers_lingers_out(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with running_hub(linger=2.0) as hub:
        topic = await hub.topic("t")
        assert await hub.topic("t") == topic
        await topic.wait_exited()
        assert trio.current_time() == 2
        assert hub.topics() == []


async def test_two_first_subscribers_share_one_topic() -> None:
    sinks = [Recorder(), Recorder()]
    async with running_hub() as hub:
        subs = [await hub.start_subscription(sink) for sink in sinks]
        results: list[bool] = []

        async def join(n: int) -> None:
            results.append(await hub.subscribe("t", subs[n]))

        async with trio.open_nursery() as nursery:
            for n in range(2):
                nursery.start_soon(join, n)
        assert results == [True, True]
        stats = await hub.statistics("t")
        assert stats is not None
        assert stats.subscribers == 2
        for sub in subs:
            await sub.close()


async def test_subscribing_to_a_topic_that_is_stopping_starts_a_fresh_one(
    autojump_clock: trio.testing.MockClock,
) -> None:
    sink = Recorder()
    async with running_hub() as hub:
        registry = current_registry()
        async with trio.open_nursery() as nursery:
            # A stand-in for a topic caught between deciding to stop and being gone: its
            # mailbox is closed, its name still registered for one more second.
            dying = await spawn_unlinked(
                nursery, ScriptedActor(Script(terminate_delay=1.0)), name="notify.topic:t"
            )
            dying.request_stop()
            await wait_all_tasks_blocked()
            assert registry.whereis("notify.topic:t") == dying
            sub = await hub.start_subscription(sink)
            assert await hub.subscribe("t", sub)
            assert trio.current_time() == 1
            fresh = hub.whereis("t")
            assert fresh is not None
            assert fresh != dying
            await hub.publish("t", "x")
            await wait_all_tasks_blocked()
            assert sink.messages == ["x"]
            await sub.close()


async def test_stopping_the_hub_closes_subscriptions_with_shutdown() -> None:
    sinks = [Recorder() for _ in range(3)]
    async with running_hub() as hub:
        subs = [await hub.start_subscription(sink, on_close=sink.on_close) for sink in sinks]
        for sub in subs:
            await hub.subscribe(TOOLS_LIST_CHANGED, sub)
    assert [sink.closes for sink in sinks] == [["shutdown"]] * 3


async def test_a_closed_stream_leaves_nothing_behind() -> None:
    async with running_hub() as hub:
        async with hub.open_subscription(Recorder(), topics=["a", "b"]) as sub:
            assert sub.open
        assert await sub.wait_closed() == "closed"
        await wait_all_tasks_blocked()
        pool = current_registry().lookup("notify.subscriptions")
        assert await which_children(pool) == []
        for topic in ("a", "b"):
            stats = await hub.statistics(topic)
            assert stats is not None
            assert stats.subscribers == 0


async def test_subscriptions_take_the_hub_policy_unless_given_one() -> None:
    small = SlowConsumerPolicy(queue_size=8)
    async with running_hub(policy=small) as hub:
        default = await hub.start_subscription(Recorder())
        own = await hub.start_subscription(Recorder(), policy=SlowConsumerPolicy(queue_size=2))
        assert (default.statistics().capacity, own.statistics().capacity) == (8, 2)
        await default.close()
        await own.close()


async def test_hubs_in_separate_registries_do_not_meet() -> None:
    left, right = Registry(), Registry()
    hubs = [NotificationHub(registry=left), NotificationHub(registry=right)]
    sinks = [Recorder(), Recorder()]
    async with open_supervisor([hubs[0].spec()]), open_supervisor([hubs[1].spec()]):
        for hub, sink in zip(hubs, sinks, strict=True):
            await hub.subscribe("t", await hub.start_subscription(sink))
        assert current_registry().registered() == {}
        await hubs[0].publish("t", "left only")
        await wait_all_tasks_blocked()
    assert (sinks[0].messages, sinks[1].messages) == (["left only"], [])


async def test_a_hub_that_is_not_running_says_so() -> None:
    hub = NotificationHub(name="absent")
    with pytest.raises(NotRegistered):
        await hub.start_subscription(Recorder())
    with pytest.raises(NotRegistered):
        await hub.topic("t")
    assert not await hub.publish("t", "x")


@pytest.mark.parametrize(
    "settings",
    [{"name": ""}, {"linger": -1.0}, {"linger": math.nan}, {"topic_mailbox_size": 0}],
)
def test_bad_hub_settings_are_refused(settings: dict[str, object]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011  (each case names a different field)
        NotificationHub(**settings)  # type: ignore[arg-type]  # deliberately wrong values
