"""The ``Broadcaster`` actor: one topic's subscribers, and a fan-out that never waits for them.

One broadcaster per topic (a list_changed kind, one resource URI's updates, log messages).
``publish`` casts a message to it; it offers the message to every subscriber in the order
they subscribed, with ``Subscriber.offer_outcome``, which never blocks. So a stalled subscriber
costs the others nothing but one failed offer per message, and the only wait a publisher can
meet is for space in the broadcaster's own mailbox (``publish``) or ``MailboxFull``
(``publish_nowait``), never for a subscriber.

Subscribers are ``Subscriber``s (``_subscriber.py``): usually a ``SubscriptionRef``, or
anything else that takes a message without waiting and names an actor that answers for it.
Links, both ways, set up when a subscriber is accepted:

* the broadcaster monitors the subscriber's actor, so a subscriber that ends for any reason
  vanishes from the topic without anyone unsubscribing it;
* the subscriber's actor monitors the broadcaster, so if the topic ends under it (a crash, the
  hub shutting down) it hears of it rather than silently missing messages: a subscription
  closes with ``"topic_ended"``; other owners may subscribe again, to a new broadcaster.

A topic with no subscribers stops itself after ``linger`` seconds (its registry name goes with
it), so memory follows the topics in use, not every resource URI ever subscribed to. The
linger rides out the usual unsubscribe-then-resubscribe and stream reconnections.

A per-subscriber filter (e.g. a session's log level) runs in this task for every message:
it must be cheap and must not raise. One that raises crashes the broadcaster (its supervisor
reports it once) and so ends every subscription to the topic with ``"topic_ended"``.

Neighbours: ``_subscriber.py`` and ``_subscription.py`` (the receiving side), ``_hub.py``
(finds or starts the broadcaster of a topic by name).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, final

from trimcp.actors import NORMAL, Actor, ActorRef, Down, MonitorRef, Request, demonitor, monitor

if TYPE_CHECKING:
    import trio

    from trimcp.actors import ReplyTo

    from ._subscriber import Subscriber

__all__ = [
    "DEFAULT_LINGER",
    "Broadcaster",
    "BroadcasterStatistics",
    "Filter",
    "publish",
    "publish_nowait",
    "subscribe",
    "topic_statistics",
    "unsubscribe",
]

logger = logging.getLogger(__name__)

#: Decides, in the broadcaster's task, whether one subscriber wants one message.
Filter: TypeAlias = Callable[[object], bool]

#: Seconds an empty topic waits for a subscriber before it stops. Longer than the usual
#: SSE reconnection delay (browsers retry after about 3 s), so a reconnecting stream finds
#: its topics still there.
DEFAULT_LINGER = 5.0


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class BroadcasterStatistics:
    """A snapshot of one topic's broadcaster.

    Attributes:
        topic: the topic's name.
        subscribers: subscribers now.
        published: messages published to the topic.
        queued: offers a subscriber accepted.
        filtered: offers skipped because a subscriber's filter said no.
        dropped_full: offers dropped because the subscriber was behind (its queue was full).
        dropped_closed: offers refused because the subscriber was closing.
        slow_consumers: subscribers that gave up (``"slow_consumer"``) on this topic's drop.
    """

    topic: str
    subscribers: int
    published: int
    queued: int
    filtered: int
    dropped_full: int
    dropped_closed: int
    slow_consumers: int


# --- messages --------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True)
class _Subscribe(Request[bool]):
    subscription: Subscriber
    filter: Filter | None = None


@final
@dataclass(frozen=True, slots=True)
class _Unsubscribe(Request[bool]):
    subscription: Subscriber


@final
@dataclass(frozen=True, slots=True)
class _Publish:
    message: object


@final
@dataclass(frozen=True, slots=True)
class _GetStatistics(Request[BroadcasterStatistics]):
    pass


@final
@dataclass(frozen=True, slots=True)
class _Linger:
    # Which empty spell armed the timer; a later subscribe makes it stale.
    epoch: int


@final
class _Entry:
    __slots__ = ("filter", "link", "subscription", "watch")

    def __init__(
        self,
        subscription: Subscriber,
        filter: Filter | None,  # noqa: A002  (the public keyword's name)
        watch: MonitorRef,
        link: MonitorRef,
    ) -> None:
        self.subscription = subscription
        self.filter = filter
        # The broadcaster watching the subscription, and the subscription watching the topic.
        self.watch = watch
        self.link = link


@final
class Broadcaster(Actor):
    """Fan one topic's messages out to its subscribers (see the module docstring).

    Args:
        topic: the topic's name, for statistics and logs.
        linger: seconds to wait, once empty, before stopping; ``math.inf`` never stops.
        first: a subscriber to accept during ``init``, so that a topic started for a
            subscriber cannot linger out before the subscriber's request arrives.
        first_filter: ``first``'s filter.
    """

    mailbox_size = 256

    def __init__(
        self,
        topic: str,
        *,
        linger: float = DEFAULT_LINGER,
        first: Subscriber | None = None,
        first_filter: Filter | None = None,
    ) -> None:
        if not linger >= 0:
            raise ValueError(f"linger must be seconds >= 0 (or math.inf), got {linger!r}")
        self._topic = topic
        self._linger = linger
        self._first = first
        self._first_filter = first_filter
        # Insertion-ordered: messages are offered in the order subscribers came.
        self._entries: dict[ActorRef, _Entry] = {}
        self._epoch = 0
        self._timer: trio.CancelScope | None = None
        self._published = 0
        self._queued = 0
        self._filtered = 0
        self._dropped_full = 0
        self._dropped_closed = 0
        self._slow_consumers = 0

    async def init(self) -> None:
        """Accept the first subscription, or start lingering."""
        if self._first is not None:
            self._add(self._first, self._first_filter)
            self._first = self._first_filter = None
        else:
            self._arm_linger()

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        """Subscribe, unsubscribe, or report statistics."""
        if isinstance(message, _Subscribe):
            return self._add(message.subscription, message.filter)
        if isinstance(message, _Unsubscribe):
            return self._remove(message.subscription.ref)
        if isinstance(message, _GetStatistics):
            return self._statistics()
        return await super().handle_call(message, reply_to)

    async def handle_cast(self, message: object) -> None:
        """Offer a published message to every subscription."""
        if not isinstance(message, _Publish):
            await super().handle_cast(message)
            return
        self._published += 1
        payload = message.message
        for entry in self._entries.values():
            if entry.filter is not None and not entry.filter(payload):
                self._filtered += 1
                continue
            outcome = entry.subscription.offer_outcome(payload)
            if outcome == "queued":
                self._queued += 1
            elif outcome == "closed":
                self._dropped_closed += 1
            else:
                self._dropped_full += 1
                if outcome == "gave_up":
                    self._slow_consumers += 1

    async def handle_info(self, message: object) -> None:
        """Forget subscriptions that ended; stop after lingering empty."""
        if isinstance(message, Down):
            entry = self._entries.get(message.ref)
            if entry is not None and entry.watch is message.monitor:
                self._remove(message.ref)
        elif isinstance(message, _Linger):
            if message.epoch == self._epoch and not self._entries:
                logger.debug(
                    "topic %s: no subscribers for %g s; stopping",
                    self._topic,
                    self._linger,
                    extra={"actor": self.name, "topic": self._topic},
                )
                self.stop(NORMAL)
        else:
            await super().handle_info(message)

    # --- state changes ------------------------------------------------------------------------

    def _add(self, subscription: Subscriber, filter: Filter | None) -> bool:  # noqa: A002
        entry = self._entries.get(subscription.ref)
        if entry is not None:
            entry.subscription = subscription
            entry.filter = filter
            return False
        watch = self.monitor(subscription.ref)
        link = monitor(self.ref, watcher=subscription.ref)
        self._entries[subscription.ref] = _Entry(subscription, filter, watch, link)
        self._disarm_linger()
        return True

    def _remove(self, ref: ActorRef) -> bool:
        entry = self._entries.pop(ref, None)
        if entry is None:
            return False
        demonitor(entry.watch)
        demonitor(entry.link)
        if not self._entries:
            self._arm_linger()
        return True

    def _arm_linger(self) -> None:
        if self._timer is None and self._linger != math.inf:
            self._timer = self.send_after(self._linger, _Linger(self._epoch))

    def _disarm_linger(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._epoch += 1

    def _statistics(self) -> BroadcasterStatistics:
        return BroadcasterStatistics(
            topic=self._topic,
            subscribers=len(self._entries),
            published=self._published,
            queued=self._queued,
            filtered=self._filtered,
            dropped_full=self._dropped_full,
            dropped_closed=self._dropped_closed,
            slow_consumers=self._slow_consumers,
        )


# --- the public functions ----------------------------------------------------------------------


async def subscribe(
    topic: ActorRef,
    subscription: Subscriber,
    *,
    filter: Filter | None = None,  # noqa: A002  (reads best at the call site)
) -> bool:
    """Add ``subscription`` to the topic; return False if it was there.

    A subscriber whose ``ref`` is subscribed already replaces the one there, with its filter.

    Raises:
        ActorGone: the topic's broadcaster has stopped (look it up, or start it, anew).
        CallTimeout: the broadcaster did not answer within the default call timeout.
    """
    return await topic.call(_Subscribe(subscription, filter))


async def unsubscribe(topic: ActorRef, subscription: Subscriber) -> bool:
    """Remove ``subscription`` from the topic; return whether it was subscribed.

    Messages already offered to it stay in its queue.

    Raises:
        ActorGone: the topic's broadcaster has stopped.
    """
    return await topic.call(_Unsubscribe(subscription))


async def publish(topic: ActorRef, message: object) -> None:
    """Publish ``message`` on the topic, waiting only for room in the broadcaster's mailbox.

    Raises:
        ActorGone: the topic's broadcaster has stopped.
    """
    await topic.cast(_Publish(message))


def publish_nowait(topic: ActorRef, message: object) -> None:
    """Publish ``message`` on the topic now or not at all (for synchronous publishers).

    Raises:
        MailboxFull: the broadcaster is that far behind; nothing was published.
        ActorGone: the topic's broadcaster has stopped.
    """
    topic.cast_nowait(_Publish(message))


async def topic_statistics(topic: ActorRef) -> BroadcasterStatistics:
    """Return a snapshot of the topic's broadcaster.

    Raises:
        ActorGone: the topic's broadcaster has stopped.
    """
    return await topic.call(_GetStatistics())
