"""``NotificationHub``: the hub's subtree, and how code finds its parts by name.

The hub is a plain frozen value naming a running subtree; every part is found through the
``Registry`` when needed, so there is no module-level state and two hubs (two applications,
two tests) only need two names. ``hub.spec()`` is the ``ChildSpec`` an application puts in its
tree; the subtree is::

    <name>                     Supervisor, rest_for_one
    ├── <name>.topics          Supervisor, simple_one_for_one
    │   └── Broadcaster x T    temporary; registered as "<name>.topic:<topic>"
    └── <name>.subscriptions   Supervisor, simple_one_for_one
        └── Subscription x M   temporary; unnamed

Topics start on demand, on their first subscriber, and stop themselves once they have lingered
empty; ``publish`` to a topic nobody subscribes to starts nothing. Subscriptions start when a
stream attaches and end when it detaches. Both are ``temporary``: a broadcaster that crashed is
reported once by its supervisor and started afresh by the next subscriber (its subscriptions
were ended with ``"topic_ended"``, so their owners reconnect); a subscription's state is its
stream's, which died with it. ``rest_for_one`` with topics first means shutdown stops the
subscriptions first (their owners hear ``"shutdown"``), then the topics.

Subscribers are ``SubscriptionRef``s started here, or any other ``Subscriber`` (``join``
subscribes one and returns the broadcaster, for owners that re-subscribe when it ends).

Races with a lingering topic: a subscriber that finds a topic which is just stopping waits for
it to exit and starts a new one, which accepts that subscriber during its ``init``, before it
could linger out.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

import trio

from trimcp.actors import ActorRef, Registry, current_registry
from trimcp.errors import ActorGone, AlreadyRegistered, StartFailed
from trimcp.supervision import ChildSpec, Supervisor, start_child

from ._broadcaster import DEFAULT_LINGER, Broadcaster, topic_statistics
from ._broadcaster import publish as publish_to
from ._broadcaster import publish_nowait as publish_nowait_to
from ._broadcaster import subscribe as subscribe_to
from ._broadcaster import unsubscribe as unsubscribe_from
from ._policy import DEFAULT_POLICY, SlowConsumerPolicy
from ._subscription import SubscriptionRef, _Account, run_subscription

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from ._broadcaster import BroadcasterStatistics, Filter
    from ._subscriber import Subscriber
    from ._subscription import OnClose, Sink

__all__ = ["NotificationHub"]

#: Rounds ``subscribe`` tries before giving up. Each failed round means a topic stopped between
#: being found and being asked, which needs a linger expiring at that very instant; two in a
#: row are already unlikely.
_SUBSCRIBE_ATTEMPTS = 5


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class NotificationHub:
    """Names a notification hub and reaches its topics and subscriptions.

    Attributes:
        name: the hub supervisor's registry name, and the prefix of its parts' names
            (default ``"notify"``).
        registry: where the parts are registered (default: the current run's registry).
        policy: the default ``SlowConsumerPolicy`` for subscriptions started here.
        linger: seconds an empty topic waits before it stops (default ``DEFAULT_LINGER``,
            5.0); ``math.inf`` keeps topics until the hub stops.
        topic_mailbox_size: each broadcaster's mailbox bound (default 256): how far
            publishers may run ahead of one topic's fan-out before ``publish`` waits.
    """

    name: str = "notify"
    registry: Registry | None = None
    policy: SlowConsumerPolicy = DEFAULT_POLICY
    linger: float = DEFAULT_LINGER
    topic_mailbox_size: int = 256

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a NotificationHub needs a non-empty name")
        if not self.linger >= 0:
            raise ValueError(f"linger must be seconds >= 0 (or math.inf), got {self.linger!r}")
        if self.topic_mailbox_size < 1:
            raise ValueError(f"topic_mailbox_size must be >= 1, got {self.topic_mailbox_size}")

    # --- the tree -------------------------------------------------------------------------------

    def spec(self) -> ChildSpec:
        """Return the child spec of the hub's subtree (module docstring), with id ``name``.

        A permanent supervisor child: the hub is restarted if its subtree ever gives up.
        """
        return ChildSpec(self.name, _run_hub, args=(self,), kind="supervisor")

    def whereis(self, topic: str) -> ActorRef | None:
        """Return the broadcaster of ``topic`` if it is running, else None (starts nothing)."""
        return self._registry().whereis(self._topic_name(topic))

    def topics(self) -> list[str]:
        """Return the running topics, sorted."""
        prefix = self._topic_name("")
        return sorted(
            name.removeprefix(prefix)
            for name in self._registry().registered()
            if name.startswith(prefix)
        )

    async def topic(self, topic: str) -> ActorRef:
        """Return the broadcaster of ``topic``, starting it if needed.

        One started here, without a subscriber, lingers like an emptied one.

        Raises:
            NotRegistered: the hub is not running.
            StartFailed: the broadcaster failed to start.
        """
        while True:
            ref = self.whereis(topic)
            if ref is None:
                ref = await self._start_topic(topic, None, None)
            if ref is not None:
                return ref

    # --- publishing -----------------------------------------------------------------------------

    async def publish(self, topic: str, message: object) -> bool:
        """Publish ``message`` on ``topic``; return False if the topic is not running.

        Waits only for room in the topic broadcaster's mailbox, never for a subscriber. A topic
        that is not running has no subscribers, so nothing is lost and nothing is started.
        """
        ref = self.whereis(topic)
        if ref is None:
            return False
        try:
            await publish_to(ref, message)
        except ActorGone:
            return False
        return True

    def publish_nowait(self, topic: str, message: object) -> bool:
        """Publish ``message`` on ``topic`` without waiting; return False if not running.

        For synchronous publishers (a registry change that announces ``list_changed``).

        Raises:
            MailboxFull: the topic's broadcaster is ``topic_mailbox_size`` messages behind;
                nothing was published.
        """
        ref = self.whereis(topic)
        if ref is None:
            return False
        try:
            publish_nowait_to(ref, message)
        except ActorGone:
            return False
        return True

    async def statistics(self, topic: str) -> BroadcasterStatistics | None:
        """Return a snapshot of ``topic``'s broadcaster, or None if it is not running."""
        ref = self.whereis(topic)
        if ref is None:
            return None
        try:
            return await topic_statistics(ref)
        except ActorGone:
            return None

    # --- subscribing ----------------------------------------------------------------------------

    async def start_subscription(
        self,
        sink: Sink,
        *,
        on_close: OnClose | None = None,
        policy: SlowConsumerPolicy | None = None,
        label: str = "",
    ) -> SubscriptionRef:
        """Start a subscription under the hub, delivering to ``sink``; return its handle.

        It is subscribed to nothing yet (see ``subscribe``). It ends when closed, when its
        sink raises, when it gives up on a slow consumer, when a topic it is subscribed to
        ends, or when the hub stops; ``on_close`` then gets the cause, once.

        Raises:
            NotRegistered: the hub is not running.
        """
        account = _Account(policy or self.policy, label)
        pool = self._registry().lookup(f"{self.name}.subscriptions")
        info = await start_child(pool, args=(sink, account, on_close))
        assert isinstance(info.value, ActorRef)
        return SubscriptionRef(info.value, account)

    @asynccontextmanager
    async def open_subscription(
        self,
        sink: Sink,
        *,
        topics: Iterable[str] = (),
        on_close: OnClose | None = None,
        policy: SlowConsumerPolicy | None = None,
        label: str = "",
    ) -> AsyncIterator[SubscriptionRef]:
        """Start a subscription to ``topics`` for the ``async with`` block, then close it.

        The subscription may end before the block does (see ``start_subscription``); the
        block learns of it through ``on_close`` or the handle's ``wait_closed``.
        """
        subscription = await self.start_subscription(
            sink, on_close=on_close, policy=policy, label=label
        )
        try:
            for topic in topics:
                await self.subscribe(topic, subscription)
            yield subscription
        finally:
            await subscription.close()

    async def subscribe(
        self,
        topic: str,
        subscription: Subscriber,
        *,
        filter: Filter | None = None,  # noqa: A002  (reads best at the call site)
    ) -> bool:
        """Subscribe to ``topic``, starting it if needed; False if already subscribed.

        ``subscription`` is a ``SubscriptionRef`` or any other ``Subscriber``. Subscribing
        again replaces the filter. From now on every message published on the topic that
        passes ``filter`` is offered to ``subscription``.

        Raises:
            NotRegistered: the hub is not running.
            ActorGone: the topic stopped under every attempt (see ``_SUBSCRIBE_ATTEMPTS``).
        """
        _, added = await self._join(topic, subscription, filter)
        return added

    async def join(
        self,
        topic: str,
        subscriber: Subscriber,
        *,
        filter: Filter | None = None,  # noqa: A002  (reads best at the call site)
    ) -> ActorRef:
        """Subscribe as ``subscribe`` does; return the broadcaster that now holds ``subscriber``.

        For owners that keep a subscriber subscribed across topic restarts: ``subscriber.ref``
        receives ``Down`` with this handle when the broadcaster ends, and may publish to it
        directly (``publish_nowait(ref, message)``) knowing the subscriber is there.

        Raises:
            NotRegistered: the hub is not running.
            ActorGone: the topic stopped under every attempt (see ``_SUBSCRIBE_ATTEMPTS``).
        """
        ref, _ = await self._join(topic, subscriber, filter)
        return ref

    async def _join(
        self,
        topic: str,
        subscriber: Subscriber,
        filter: Filter | None,  # noqa: A002
    ) -> tuple[ActorRef, bool]:
        for _ in range(_SUBSCRIBE_ATTEMPTS):
            ref = self.whereis(topic)
            if ref is None:
                started = await self._start_topic(topic, subscriber, filter)
                if started is not None:
                    return started, True
                continue  # another subscriber started it first: join theirs
            try:
                return ref, await subscribe_to(ref, subscriber, filter=filter)
            except ActorGone:
                await ref.wait_exited()  # it lingered out just now; its name goes with it
        raise ActorGone(self._topic_name(topic), "stopping on every attempt to subscribe")

    async def unsubscribe(self, topic: str, subscription: Subscriber) -> bool:
        """Unsubscribe from ``topic``; return whether it was subscribed."""
        ref = self.whereis(topic)
        if ref is None:
            return False
        try:
            return await unsubscribe_from(ref, subscription)
        except ActorGone:
            return False

    # --- helpers --------------------------------------------------------------------------------

    def _registry(self) -> Registry:
        return self.registry or current_registry()

    def _topic_name(self, topic: str) -> str:
        return f"{self.name}.topic:{topic}"

    async def _start_topic(
        self,
        topic: str,
        first: Subscriber | None,
        filter: Filter | None,  # noqa: A002
    ) -> ActorRef | None:
        """Start ``topic``'s broadcaster; None if another task registered it first."""
        pool = self._registry().lookup(f"{self.name}.topics")
        try:
            info = await start_child(pool, args=(topic, first, filter))
        except StartFailed as exc:
            if isinstance(exc.__cause__, AlreadyRegistered):
                return None
            raise
        assert isinstance(info.value, ActorRef)
        return info.value


# --- start functions of the subtree -------------------------------------------------------------


async def _run_hub(
    hub: NotificationHub, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
) -> None:
    topic = ChildSpec("topic", _run_topic, args=(hub,), restart="temporary")
    subscription = ChildSpec("subscription", run_subscription, restart="temporary")
    children = [
        ChildSpec(
            "topics", _run_pool, args=(f"{hub.name}.topics", hub.registry, topic), kind="supervisor"
        ),
        ChildSpec(
            "subscriptions",
            _run_pool,
            args=(f"{hub.name}.subscriptions", hub.registry, subscription),
            kind="supervisor",
        ),
    ]
    supervisor = Supervisor(children, strategy="rest_for_one")
    await supervisor.run(name=hub.name, registry=hub.registry, task_status=task_status)


async def _run_pool(
    name: str,
    registry: Registry | None,
    template: ChildSpec,
    task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED,
) -> None:
    supervisor = Supervisor([template], strategy="simple_one_for_one")
    await supervisor.run(name=name, registry=registry, task_status=task_status)


async def _run_topic(
    hub: NotificationHub,
    topic: str,
    first: Subscriber | None,
    first_filter: Filter | None,
    task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED,
) -> None:
    actor = Broadcaster(topic, linger=hub.linger, first=first, first_filter=first_filter)
    await actor.run(
        name=hub._topic_name(topic),
        registry=hub.registry,
        mailbox_size=hub.topic_mailbox_size,
        task_status=task_status,
    )
