"""A Hypothesis state machine over a real hub: subscribe, unsubscribe, publish, stall, resume.

The machine owns a ``TrioHost`` (one trio run in a helper thread, as ``ProtocolStateMachine``
does) running a ``NotificationHub``; each rule steps into the run, acts, and waits until the
run is idle, so the model below can say exactly what every sink holds. Nothing depends on
time: topics linger 0 s and drops are counted over a subscription's whole life.

The model: a subscriber receives exactly the messages published, after it subscribed, on a
topic it is subscribed to, in order, except while it is stalled. A stalled subscriber holds one
message in its sink and ``queue_size`` in its queue, drops the rest, and is disconnected at
``max_dropped`` drops; on resuming it gets what it held, in order. A topic runs exactly while
some open subscription is subscribed to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from trio.testing import wait_all_tasks_blocked

from trimcp.actors import Registry
from trimcp.notify import NotificationHub, SlowConsumerPolicy
from trimcp.supervision import open_supervisor
from trimcp.testing._trio_host import TrioHost

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.notify import CloseCause, SubscriptionRef, SubscriptionStatistics

POLICY = SlowConsumerPolicy(queue_size=2, max_dropped=3, drop_window=math.inf)
TOPICS = st.sampled_from(["a", "b"])
PICK = st.integers(0, 7)


class Valve:
    """A sink that delivers at once, or, while stalled, blocks until resumed."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self.gate: trio.Event | None = None

    async def __call__(self, message: object) -> None:
        gate = self.gate
        if gate is not None:
            await gate.wait()
        assert isinstance(message, int)
        self.received.append(message)

    def stall(self) -> None:
        self.gate = trio.Event()

    def resume(self) -> None:
        if self.gate is not None:
            self.gate.set()
            self.gate = None


@dataclass(eq=False)
class Subscriber:
    """One subscription as the model sees it, next to its real handle and sink."""

    handle: SubscriptionRef
    sink: Valve
    topics: set[str] = field(default_factory=set)
    expected: list[int] = field(default_factory=list)
    stalled: bool = False
    # Messages a stalled subscriber holds: the first is in its sink, the rest queued.
    held: list[int] = field(default_factory=list)
    dropped: int = 0
    closed_by: CloseCause | None = None

    def offer(self, message: int) -> None:
        if not self.stalled:
            self.expected.append(message)
        elif len(self.held) < 1 + POLICY.queue_size:
            self.held.append(message)
        else:
            self.dropped += 1
            event("a stalled subscriber dropped a message")
            if self.dropped == POLICY.max_dropped:
                event("a slow consumer was disconnected")
                self.close("slow_consumer")

    def close(self, cause: CloseCause) -> None:
        self.closed_by = cause
        self.topics.clear()
        self.held.clear()


async def _serve_hub(
    hub: NotificationHub, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    async with open_supervisor([hub.spec()], registry=hub.registry):
        task_status.started()
        await trio.sleep_forever()


class HubMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.host = TrioHost(name="notify-machine")
        self.hub = NotificationHub(name="m", registry=Registry(), linger=0.0, policy=POLICY)
        self.subscribers: list[Subscriber] = []
        self.published = 0
        # What the run looked like after the last step (taken inside the run, once idle).
        self.received: list[list[int]] = []
        self.statistics: list[SubscriptionStatistics] = []
        self.topics: list[str] = []
        try:
            self.host.run(self.host.nursery.start, _serve_hub, self.hub)
        except BaseException:
            self.host.close()
            raise

    def teardown(self) -> None:
        self.host.close()

    def _step(self, afn: Callable[[], Awaitable[object]]) -> object:
        """Run ``afn`` in the hub's run, wait until the run is idle, then take a snapshot."""
        return self.host.run(self._settled, afn)

    async def _settled(self, afn: Callable[[], Awaitable[object]]) -> object:
        result = await afn()
        await wait_all_tasks_blocked()
        self.received = [list(sub.sink.received) for sub in self.subscribers]
        self.statistics = [sub.handle.statistics() for sub in self.subscribers]
        self.topics = self.hub.topics()
        return result

    def _pick(self, index: int) -> Subscriber:
        return self.subscribers[index % len(self.subscribers)]

    # --- rules ------------------------------------------------------------------------------

    @initialize(count=st.integers(1, 3))
    def start_subscribers_on_a(self, count: int) -> None:
        for _ in range(count):
            self.start_subscriber()
            self.subscribe(len(self.subscribers) - 1, "a")

    @precondition(lambda self: len(self.subscribers) < 6)
    @rule()
    def start_subscriber(self) -> None:
        sink = Valve()

        async def start() -> None:
            handle = await self.hub.start_subscription(sink)
            self.subscribers.append(Subscriber(handle, sink))

        self._step(start)

    @precondition(lambda self: self.subscribers)
    @rule(index=PICK, topic=TOPICS)
    def subscribe(self, index: int, topic: str) -> None:
        sub = self._pick(index)
        added = self._step(lambda: self.hub.subscribe(topic, sub.handle))
        if sub.closed_by is None:
            assert added == (topic not in sub.topics)
            sub.topics.add(topic)

    @precondition(lambda self: self.subscribers)
    @rule(index=PICK, topic=TOPICS)
    def unsubscribe(self, index: int, topic: str) -> None:
        sub = self._pick(index)
        removed = self._step(lambda: self.hub.unsubscribe(topic, sub.handle))
        assert removed == (topic in sub.topics)
        sub.topics.discard(topic)

    @rule(topic=TOPICS, count=st.integers(1, 6))
    def publish(self, topic: str, count: int) -> None:
        messages = list(range(self.published, self.published + count))
        self.published += count

        async def publish_each() -> list[bool]:
            running = []
            for message in messages:
                running.append(await self.hub.publish(topic, message))
                await wait_all_tasks_blocked()
            return running

        running = self._step(publish_each)
        expected = []
        for message in messages:
            expected.append(any(topic in sub.topics for sub in self.subscribers))
            for sub in self.subscribers:
                if topic in sub.topics:
                    sub.offer(message)
        assert running == expected

    @precondition(lambda self: any(not s.stalled and not s.closed_by for s in self.subscribers))
    @rule(index=PICK)
    def stall(self, index: int) -> None:
        candidates = [s for s in self.subscribers if not s.stalled and not s.closed_by]
        sub = candidates[index % len(candidates)]
        self._step(_as_async(sub.sink.stall))
        sub.stalled = True

    @precondition(lambda self: any(s.stalled for s in self.subscribers))
    @rule(index=PICK)
    def resume(self, index: int) -> None:
        candidates = [s for s in self.subscribers if s.stalled]
        sub = candidates[index % len(candidates)]
        self._step(_as_async(sub.sink.resume))
        sub.stalled = False
        if sub.held:
            event("a stalled subscriber resumed with messages held")
        sub.expected.extend(sub.held)
        sub.held.clear()

    @precondition(lambda self: self.subscribers)
    @rule(index=PICK)
    def close(self, index: int) -> None:
        sub = self._pick(index)
        cause = self._step(sub.handle.close)
        if sub.closed_by is None:
            sub.close("closed")
        assert cause == sub.closed_by

    # --- invariants ---------------------------------------------------------------------------

    @invariant()
    def every_sink_holds_exactly_what_the_model_says(self) -> None:
        assert self.received == [sub.expected for sub in self.subscribers]

    @invariant()
    def queues_and_drops_are_as_modelled(self) -> None:
        for sub, stat in zip(self.subscribers, self.statistics, strict=True):
            assert stat.dropped == sub.dropped
            assert stat.closed_by == sub.closed_by
            assert stat.queued == (max(len(sub.held) - 1, 0) if sub.closed_by is None else 0)
            assert stat.peak <= POLICY.queue_size

    @invariant()
    def topics_run_exactly_while_subscribed(self) -> None:
        assert self.topics == sorted({t for sub in self.subscribers for t in sub.topics})


def _as_async(fn: Callable[[], None]) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        fn()

    return run


TestHubMachine = HubMachine.TestCase
TestHubMachine.settings = settings(max_examples=100, stateful_step_count=40, deadline=None)
