"""The ``Subscription`` actor: one subscriber stream's bounded queue in front of its sink.

A subscription exists while one subscriber stream (an SSE response, a WebSocket, stdio) is
attached. Its actor task takes messages from its mailbox one at a time and awaits the sink
("write this notification to that stream") with each, so the stream sees them in the order
they were offered. Publishers never wait for it: ``SubscriptionRef.offer`` queues without
blocking, and a full queue drops the message, counts it, and after the policy's limit closes
the subscription (``_policy.py`` states the policy). A stalled sink therefore holds one message,
its queue holds at most ``queue_size`` more, and nothing else waits on it.

Who counts drops: the offering task, synchronously, in the account the subscription's handles
share with its task. The subscription's own task cannot count them, because it may be stuck in
the very sink that makes it slow. Like ``trimcp.actors``' cells, the account is touched only by
synchronous code (``offer``, the actor's handlers) and trio runs one task at a time, so it
needs no lock. Giving up cancels the stuck sink through ``request_stop``.

How it ends, logged once: a slow consumer at WARNING (``_policy.py``); a sink that raised one
of the "stream closed" errors at DEBUG, any other sink error at WARNING with its traceback;
everything else at DEBUG. None of these is a crash, so a supervisor reports nothing: the exit
reason is ``normal`` or ``shutdown``, and the precise ``CloseCause`` goes to ``on_close``.

Neighbours: ``_broadcaster.py`` offers to subscriptions; ``_hub.py`` starts them under the
hub's supervisor; ``spawn_subscription`` here runs one in any nursery.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, final

import trio

from trimcp.actors import NORMAL, SHUTDOWN, Actor, ActorRef, Down, ExitReason, spawn
from trimcp.errors import ActorGone, MailboxFull, TransportBroken, TransportClosed

from ._policy import DEFAULT_POLICY, CloseCause, DropWindow, close_cause, record_drop

if TYPE_CHECKING:
    from ._policy import SlowConsumerPolicy
    from ._subscriber import Offered

__all__ = [
    "OnClose",
    "Sink",
    "Subscription",
    "SubscriptionRef",
    "SubscriptionStatistics",
    "run_subscription",
    "spawn_subscription",
]

logger = logging.getLogger(__name__)

#: Writes one message to the subscriber's stream. Raising ends the subscription
#: (``"sink_failed"``); it must let trio cancellation through, which is how a stalled write is
#: abandoned when the subscription gives up or is closed.
Sink: TypeAlias = Callable[[object], Awaitable[None]]

#: Called once, synchronously, from the subscription's task as it ends, with the cause. The
#: owner uses it to close its stream; it must not block, and an exception from it counts as
#: the subscription crashing. Not called if the subscription is killed (``terminate``
#: skipped), which only happens when it overruns its stop budget.
OnClose: TypeAlias = Callable[[CloseCause], None]

#: Errors a sink raises when its stream went away: routine, so logged at DEBUG only.
_STREAM_CLOSED = (
    trio.ClosedResourceError,
    trio.BrokenResourceError,
    TransportClosed,
    TransportBroken,
)

_NO_DROPS = DropWindow()


@final
class _Account:
    """What a subscription's handles and its task share (see the module docstring)."""

    __slots__ = ("cause", "delivered", "dropped", "label", "policy", "window")

    def __init__(self, policy: SlowConsumerPolicy, label: str) -> None:
        self.policy = policy
        self.label = label
        self.delivered = 0
        self.dropped = 0
        self.window = _NO_DROPS
        # Set once, by whoever first decides the subscription ends; ``None`` while it is open.
        self.cause: CloseCause | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriptionStatistics:
    """A snapshot of one subscription.

    Attributes:
        name: the subscription actor's name.
        label: what its owner called it (e.g. a session id), for logs.
        delivered: messages the sink accepted.
        dropped: messages refused because the queue was full.
        queued: messages waiting for the sink now (not counting the one it is writing).
        capacity: the queue bound, ``policy.queue_size``.
        peak: the most messages ever queued at once.
        closed_by: why it closed or is closing; None while it is open.
    """

    name: str
    label: str
    delivered: int
    dropped: int
    queued: int
    capacity: int
    peak: int
    closed_by: CloseCause | None


@final
class Subscription(Actor):
    """Deliver queued messages to a sink, in order, until closed (see the module docstring).

    Start it with ``spawn_subscription`` or ``NotificationHub.start_subscription``; talk to it
    through the ``SubscriptionRef`` they return. Its casts are the messages to deliver; its
    infos are ``Down`` notices from the topics it is subscribed to (a topic's broadcaster links
    the two when it accepts the subscription).
    """

    def __init__(
        self,
        sink: Sink,
        account: _Account,
        on_close: OnClose | None = None,
    ) -> None:
        self._sink = sink
        self._account = account
        self._on_close = on_close

    async def handle_cast(self, message: object) -> None:
        """Write ``message`` to the sink; a sink that raises ends the subscription."""
        try:
            await self._sink(message)
        except Exception as exc:  # noqa: BLE001  (the stream's boundary: a failure ends it)
            self._sink_failed(exc)
            return
        self._account.delivered += 1

    async def handle_info(self, message: object) -> None:
        """End the subscription when a topic it is subscribed to ends under it."""
        if not isinstance(message, Down):
            await super().handle_info(message)
            return
        self._close("topic_ended")
        logger.debug(
            "subscription %s: topic %s ended (%s); closing",
            self.name,
            message.ref.name,
            message.reason,
            extra={"actor": self.name, "subscription": self._account.label},
        )
        self.stop(NORMAL)

    async def terminate(self, reason: ExitReason) -> None:
        """Record why the subscription ended, log it once, and tell the owner."""
        account = self._account
        cause = close_cause(account.cause, reason)
        account.cause = cause
        fields = {"actor": self.name, "subscription": account.label, "cause": cause}
        if cause == "slow_consumer":
            policy = account.policy
            logger.warning(
                "subscription %s: slow consumer disconnected after %d dropped messages "
                "(limit %d within %g s, queue %d, %d delivered)",
                self.name,
                account.dropped,
                policy.max_dropped,
                policy.drop_window,
                policy.queue_size,
                account.delivered,
                extra=fields,
            )
        else:
            logger.debug("subscription %s closed: %s", self.name, cause, extra=fields)
        if self._on_close is not None:
            self._on_close(cause)

    def _sink_failed(self, exc: Exception) -> None:
        if self._close("sink_failed"):
            fields = {"actor": self.name, "subscription": self._account.label}
            if isinstance(exc, _STREAM_CLOSED):
                logger.debug("subscription %s: stream closed: %r", self.name, exc, extra=fields)
            else:
                logger.warning(
                    "subscription %s: sink failed; closing", self.name, exc_info=exc, extra=fields
                )
        self.stop(NORMAL)

    def _close(self, cause: CloseCause) -> bool:
        """Record ``cause`` unless another was recorded first; return whether it was."""
        if self._account.cause is not None:
            return False
        self._account.cause = cause
        return True


@final
class SubscriptionRef:
    """The handle to one subscription: offer it messages, read its statistics, close it.

    A ``Subscriber`` (``_subscriber.py``): topics accept it as their subscriber.

    Get one from ``spawn_subscription`` or ``NotificationHub.start_subscription``. Handles
    compare equal when they name the same subscription.
    """

    __slots__ = ("_account", "_ref")

    def __init__(self, ref: ActorRef, account: _Account) -> None:
        self._ref = ref
        self._account = account

    def __repr__(self) -> str:
        label = f" {self._account.label!r}" if self._account.label else ""
        return f"<SubscriptionRef {self._ref.name}{label} ({self._account.cause or 'open'})>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SubscriptionRef) and other._ref == self._ref

    def __hash__(self) -> int:
        return hash(self._ref)

    @property
    def ref(self) -> ActorRef:
        """The subscription actor's handle (to monitor it, or to find it in a supervisor)."""
        return self._ref

    @property
    def name(self) -> str:
        """The subscription actor's name."""
        return self._ref.name

    @property
    def open(self) -> bool:
        """True until the subscription starts closing, for any reason."""
        return self._account.cause is None and self._ref.alive

    def offer(self, message: object) -> bool:
        """Queue ``message`` for the sink without waiting; return whether it was queued.

        A full queue drops the message and counts it; when that makes ``max_dropped`` drops
        within ``drop_window`` seconds, the subscription starts closing as a slow consumer
        (its pending sink write is cancelled). A closing or closed subscription refuses
        every message, uncounted.
        """
        return self.offer_outcome(message) == "queued"

    def offer_outcome(self, message: object) -> Offered:
        """Do what ``offer`` does; return ``"queued"``, ``"dropped"``, ``"gave_up"`` (this
        drop closed the subscription) or ``"closed"`` (refused: it was closing already).
        """
        account = self._account
        if account.cause is not None:
            return "closed"
        try:
            self._ref.cast_nowait(message)
        except MailboxFull:
            return self._drop(account)
        except ActorGone:
            return "closed"
        return "queued"

    def _drop(self, account: _Account) -> Offered:
        account.dropped += 1
        account.window, exceeded = record_drop(account.window, trio.current_time(), account.policy)
        if not exceeded:
            return "dropped"
        account.cause = "slow_consumer"
        # Cancels the sink write the subscription is stuck in; ``terminate`` logs and reports.
        self._ref.request_stop(SHUTDOWN)
        return "gave_up"

    def statistics(self) -> SubscriptionStatistics:
        """Return a snapshot of the subscription (no message to it: it may be stuck)."""
        actor = self._ref.statistics()
        account = self._account
        return SubscriptionStatistics(
            name=actor.name,
            label=account.label,
            delivered=account.delivered,
            dropped=account.dropped,
            queued=actor.mailbox_length,
            capacity=actor.mailbox_capacity,
            peak=actor.mailbox_peak,
            closed_by=account.cause,
        )

    def request_close(self) -> None:
        """Start closing the subscription with cause ``"closed"``, without waiting.

        A sink write in progress is cancelled; queued messages are discarded. Does nothing
        if it is already closing.
        """
        if self._account.cause is None and self._ref.alive:
            self._account.cause = "closed"
            self._ref.request_stop(SHUTDOWN)

    async def close(self) -> CloseCause:
        """Close the subscription (see ``request_close``) and wait until it has ended."""
        self.request_close()
        return await self.wait_closed()

    async def wait_closed(self) -> CloseCause:
        """Wait until the subscription has ended and return why."""
        reason = await self._ref.wait_exited()
        return close_cause(self._account.cause, reason)


async def run_subscription(
    sink: Sink,
    account: _Account,
    on_close: OnClose | None,
    task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run one subscription actor (a start function for ``ChildSpec``); report its ActorRef."""
    actor = Subscription(sink, account, on_close)
    await actor.run(mailbox_size=account.policy.queue_size, task_status=task_status)


async def spawn_subscription(
    nursery: trio.Nursery,
    sink: Sink,
    *,
    policy: SlowConsumerPolicy = DEFAULT_POLICY,
    on_close: OnClose | None = None,
    label: str = "",
) -> SubscriptionRef:
    """Start a subscription in ``nursery`` and return its handle.

    For subscriptions outside a ``NotificationHub`` (tests, a single stdio stream). It runs
    until closed, its sink fails, it gives up on a slow consumer, or ``nursery`` is cancelled;
    none of those is an error, so none reaches ``nursery``.
    """
    account = _Account(policy, label)
    actor = Subscription(sink, account, on_close)
    ref = await spawn(nursery, actor, mailbox_size=policy.queue_size)
    return SubscriptionRef(ref, account)
