"""``Subscriber``: what a topic's broadcaster needs of the things it fans out to.

A broadcaster offers each message to each subscriber and never waits for one, so a subscriber
is anything with a non-blocking ``offer`` and an actor to watch:

* ``SubscriptionRef`` (``_subscription.py``): one stream's bounded queue in front of a sink,
  run as its own ``Subscription`` actor. For streams that have no actor of their own.
* Anything else that can take a message without waiting and names an actor that answers for
  it: ``trimcp.server`` subscribes its sessions this way, delivering through each session's
  own mailbox (``SessionHandle.notify_nowait``) instead of a second queue and task per session.

The ``ref`` links subscriber and topic both ways (``_broadcaster.py``): the topic drops the
subscriber when that actor exits, and that actor receives ``Down`` when the topic ends, so it
can close (a ``Subscription`` does, with ``"topic_ended"``) or subscribe again (the server's
fan-out actor does). One topic holds at most one subscriber per ``ref``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

if TYPE_CHECKING:
    from trimcp.actors import ActorRef

__all__ = ["Offered", "Subscriber"]

#: What an offer did with a message (for broadcasters' statistics): ``"queued"`` (accepted),
#: ``"dropped"`` (refused and counted: the subscriber is behind), ``"gave_up"`` (that drop made
#: the subscriber close as a slow consumer), ``"closed"`` (refused: it is closing already).
Offered: TypeAlias = Literal["queued", "dropped", "gave_up", "closed"]


class Subscriber(Protocol):
    """One subscriber of a topic, as its broadcaster sees it (module docstring).

    Implementers guarantee that ``offer`` and ``offer_outcome`` never block, never await and
    never raise: they run in the broadcaster's task, once per message and subscriber.
    """

    @property
    def ref(self) -> ActorRef:
        """The actor that answers for this subscriber: watched by the topic, told of its end."""
        ...

    @property
    def name(self) -> str:
        """A name for logs."""
        ...

    @property
    def open(self) -> bool:
        """True while the subscriber accepts messages."""
        ...

    def offer(self, message: object) -> bool:
        """Take ``message`` without waiting; return whether it was accepted."""
        ...

    def offer_outcome(self, message: object) -> Offered:
        """Do what ``offer`` does; say what became of ``message`` (``Offered``)."""
        ...
