"""The ``Fanout`` actor: keeps one server's sessions subscribed to a ``NotificationHub``.

One per server and hub, started right after the hub under one ``rest_for_one`` supervisor
(``MCPServer.notification_spec``), so a hub that restarts gets a fresh ``Fanout`` too. It
owns the server's side of the hub: which ``SessionGroup`` (``_broadcast.py``) is subscribed
to which broadcaster. The sessions themselves never talk to it, and the server's publishers
only read what it set up.

* ``init`` attaches it to the server's ``SessionSet`` (from then on the server publishes
  through the hub) and subscribes a group to each standing topic (tools, resources and
  prompts list_changed; log messages) and to the ``resources/updated`` topic of every URI a
  session is subscribed to.
* ``Reconcile(topic)``, cast by the ``SessionSet`` when a URI gains its first subscriber or
  loses its last (or when a publisher finds a wanted topic without its group): subscribe or
  unsubscribe that topic's group, whichever the sessions want now.
* ``Down`` from a broadcaster (the topic crashed, or was stopped): the server publishes that
  topic directly from that moment, and the group is subscribed again, to a fresh broadcaster.
  No session notices: sessions are the server's, not the topic's.
* ``terminate`` detaches (the direct way from then on), then calls each broadcaster once: a
  call is answered after the casts queued before it, so what was published through the hub
  before the detach has been handed to the sessions when the ``Fanout`` is gone.

A second ``Fanout`` for a server that has one (two runners serving one server object in one
program) stands by, watching the first, and takes over when it ends.

Neighbours: ``_broadcast.py`` (the sessions, the groups, the publishers), ``trimcp.notify``
(the hub and its broadcasters).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

import trio

from trimcp.actors import Actor, Down
from trimcp.errors import ActorError, StartFailed
from trimcp.notify import topic_statistics, unsubscribe

from ._broadcast import is_notification

if TYPE_CHECKING:
    from trimcp.actors import ActorRef, ExitReason, MonitorRef
    from trimcp.notify import NotificationHub

    from ._broadcast import SessionSet

__all__ = ["Fanout", "Reconcile"]

logger = logging.getLogger(__name__)

#: Seconds before subscribing a topic's group again after the hub refused (it is restarting).
RETRY_DELAY = 1.0
#: Seconds ``terminate`` waits for the broadcasters to hand on what they hold.
FLUSH_TIMEOUT = 1.0


@final
@dataclass(frozen=True, slots=True)
class Reconcile:
    """Cast to a ``Fanout``: make ``topic``'s group subscribed iff the sessions want it."""

    topic: str


@final
class Fanout(Actor):
    """Keep a server's ``SessionGroup``s subscribed to ``hub`` (see the module docstring).

    Args:
        sessions: the server's sessions (``MCPServer``'s ``SessionSet``).
        hub: the running hub to subscribe to.
    """

    mailbox_size = 1024

    def __init__(self, sessions: SessionSet, hub: NotificationHub) -> None:
        self._sessions = sessions
        self._hub = hub
        self._active = False
        self._standby: MonitorRef | None = None
        # Broadcaster -> the topic its group is subscribed to (to know a Down when it comes).
        self._topics: dict[ActorRef, str] = {}

    async def init(self) -> None:
        """Attach to the sessions and subscribe their groups, or stand by."""
        await self._take_over()

    async def handle_cast(self, message: object) -> None:
        """Subscribe or unsubscribe a topic's group (``Reconcile``)."""
        if isinstance(message, Reconcile):
            if self._active:
                await self._retrying(message.topic)
        else:
            await super().handle_cast(message)

    async def handle_info(self, message: object) -> None:
        """Subscribe a group again when its broadcaster ends; take over from a stopped peer."""
        if isinstance(message, Reconcile):  # a retry (send_after)
            await self.handle_cast(message)
        elif isinstance(message, Down):
            if message.monitor is self._standby:
                self._standby = None
                await self._take_over()
                return
            topic = self._topics.pop(message.ref, None)
            if topic is None:
                return
            group = self._sessions.groups.get(topic)
            if group is not None and group.broadcaster == message.ref:
                group.broadcaster = None
            logger.info(
                "topic %s ended (%s); subscribing the sessions again",
                topic,
                message.reason,
                extra={"actor": self.name, "topic": topic},
            )
            await self._retrying(topic)
        else:
            await super().handle_info(message)

    async def terminate(self, reason: ExitReason) -> None:
        """Detach, then let the broadcasters hand on what they hold (module docstring)."""
        if not self._active:
            return
        self._active = False
        refs = self._sessions.detach(self.ref)
        with trio.move_on_after(FLUSH_TIMEOUT):
            for ref in refs:
                with contextlib.suppress(ActorError):
                    await topic_statistics(ref)

    # --- helpers --------------------------------------------------------------------------

    async def _take_over(self) -> None:
        other = self._sessions.attach(self.ref, self._hub, self._request)
        if other is not None:
            logger.info(
                "%s stands by: the server's sessions already go through %s",
                self.name,
                other.name,
                extra={"actor": self.name},
            )
            self._standby = self.monitor(other)
            return
        self._active = True
        for topic in self._sessions.wanted():
            await self._reconcile(topic)

    def _request(self, topic: str) -> None:
        """Ask for ``topic`` to be reconciled; from synchronous code, never waits.

        A full mailbox drops the request: the topic keeps the direct way, and the next
        publish on it asks again.
        """
        with contextlib.suppress(ActorError):
            self.ref.cast_nowait(Reconcile(topic))

    async def _retrying(self, topic: str) -> None:
        """Reconcile ``topic``; if the hub refuses (restarting), try again later."""
        try:
            await self._reconcile(topic)
        except (ActorError, StartFailed) as exc:
            logger.debug(
                "topic %s: hub refused (%r); trying again in %g s", topic, exc, RETRY_DELAY
            )
            self.send_after(RETRY_DELAY, Reconcile(topic))

    async def _reconcile(self, topic: str) -> None:
        sessions = self._sessions
        if sessions.wants(topic):
            group = sessions.group(topic)
            if group.subscribed:
                return
            if group.broadcaster is not None:  # ended; its Down is on the way or was seen
                self._topics.pop(group.broadcaster, None)
                group.broadcaster = None
            ref = await self._hub.join(topic, group, filter=is_notification)
            # Publishers use it from now on; what they published before went the direct way.
            group.broadcaster = ref
            self._topics[ref] = topic
            return
        released = sessions.release(topic)
        if released is None or released.broadcaster is None:
            return
        ref, released.broadcaster = released.broadcaster, None
        self._topics.pop(ref, None)
        with contextlib.suppress(ActorError):
            await unsubscribe(ref, released)
