"""``Subscriber``: a topic fans out to anything with a non-blocking offer and an actor behind it.

The subscriber here is a plain object whose actor records ``Down`` notices, standing for an
owner (like the server's ``Fanout``) that keeps its subscriber subscribed across topic ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

from trimcp.actors import Actor, ActorRef, Down, spawn
from trimcp.notify import TOOLS_LIST_CHANGED, publish_nowait

from ._support import Recorder, running_hub

if TYPE_CHECKING:
    from trimcp.notify import Offered


@final
class Owner(Actor):
    """Records the ``Down`` notices it gets (a topic it answers for ended)."""

    def __init__(self) -> None:
        self.downs: list[Down] = []

    async def handle_info(self, message: object) -> None:
        if isinstance(message, Down):
            self.downs.append(message)
        else:
            await super().handle_info(message)


@final
class Inbox:
    """A subscriber without a task of its own: offers land in a list, up to ``limit``."""

    def __init__(self, owner: ActorRef, limit: int = 1_000) -> None:
        self._owner = owner
        self.limit = limit
        self.messages: list[object] = []

    @property
    def ref(self) -> ActorRef:
        return self._owner

    @property
    def name(self) -> str:
        return f"inbox of {self._owner.name}"

    @property
    def open(self) -> bool:
        return self._owner.alive

    def offer(self, message: object) -> bool:
        return self.offer_outcome(message) == "queued"

    def offer_outcome(self, message: object) -> Offered:
        if len(self.messages) >= self.limit:
            return "dropped"
        self.messages.append(message)
        return "queued"


async def test_a_subscriber_without_a_task_gets_offers_beside_a_subscription(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with running_hub() as hub, trio.open_nursery() as nursery:
        owner = Owner()
        ref = await spawn(nursery, owner)
        inbox = Inbox(ref, limit=2)
        sink = Recorder()
        subscription = await hub.start_subscription(sink)
        topic = await hub.join(TOOLS_LIST_CHANGED, inbox)
        assert topic == hub.whereis(TOOLS_LIST_CHANGED)
        assert await hub.join(TOOLS_LIST_CHANGED, inbox) == topic  # again: no change
        await hub.subscribe(TOOLS_LIST_CHANGED, subscription)
        for n in range(3):
            publish_nowait(topic, n)
        await wait_all_tasks_blocked()
        assert inbox.messages == [0, 1]
        assert sink.messages == [0, 1, 2]
        stats = await hub.statistics(TOOLS_LIST_CHANGED)
        assert stats is not None
        assert (stats.subscribers, stats.queued, stats.dropped_full) == (2, 5, 1)

        # Its actor exits: the topic forgets it, as it forgets a closed subscription.
        await ref.stop()
        await wait_all_tasks_blocked()
        stats = await hub.statistics(TOOLS_LIST_CHANGED)
        assert stats is not None
        assert stats.subscribers == 1
        await subscription.close()


async def test_the_owner_hears_when_its_topic_ends_and_can_join_a_new_one(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with running_hub() as hub, trio.open_nursery() as nursery:
        owner = Owner()
        ref = await spawn(nursery, owner)
        inbox = Inbox(ref)
        first = await hub.join(TOOLS_LIST_CHANGED, inbox)
        first.kill()
        await wait_all_tasks_blocked()
        (down,) = owner.downs
        assert down.ref == first
        second = await hub.join(TOOLS_LIST_CHANGED, inbox)
        assert second != first
        assert second.alive
        publish_nowait(second, "after")
        await wait_all_tasks_blocked()
        assert inbox.messages == ["after"]
        # Unsubscribed, the owner is no longer told about the topic.
        assert await hub.unsubscribe(TOOLS_LIST_CHANGED, inbox)
        second.kill()
        await wait_all_tasks_blocked()
        assert len(owner.downs) == 1
        ref.request_stop()
