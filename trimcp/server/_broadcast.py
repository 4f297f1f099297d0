"""The live sessions of one server, and how its notifications reach them.

Sessions announce themselves through ``RequestHandler.session_opened``/``session_closed``
and are forgotten (with their resource subscriptions) when they close. The server sends three
kinds of notification to many sessions at once: ``notifications/{tools,resources,prompts}/
list_changed`` (to every session), ``notifications/resources/updated`` (to the sessions
subscribed to that URI) and server-wide ``notifications/message`` (to every session whose
``logging/setLevel`` level it passes). Each goes one of two ways:

* **Through a hub.** When the server runs with a ``NotificationHub`` (its runners and the
  daemon start one; see ``MCPServer.notification_spec``), each kind is a topic of the hub,
  one ``Broadcaster`` each (``resources/updated:<uri>`` per URI). The publisher casts once and
  returns; the broadcaster's task offers the notification to the topic's ``SessionGroup``,
  which hands it to each of its sessions with ``SessionHandle.notify_nowait``: into that
  session's own mailbox, for its own task to send. Nobody waits on a session.
* **Directly**, without a hub (in-memory tests, embedded use) exactly as before the hub
  existed: list_changed posted with ``notify_nowait``, resources/updated awaited session by
  session. With a hub the direct way is the fallback for a topic whose group is not
  subscribed yet, whose broadcaster has just ended, or whose broadcaster is
  ``topic_mailbox_size`` messages behind; the fallback never waits on a session either.

A session is not a topic subscriber of its own: a ``SessionGroup`` per topic stands for all of
them, reading its members from this set when it delivers. So a session joins every topic the
moment it opens (or subscribes to a URI), without a message to anyone, and an idle session
costs the topics nothing (a subscriber entry per session and topic costs about 0.9 KB with
its two monitors: 3.7 KB for the four standing topics, over a third of an idle session's
10 KB budget, and four calls to the broadcasters per new session). The set is the server's
plain table, like ``trimcp.actors.Registry``: sessions' tasks, request handlers and the
broadcasters' tasks read and change it only synchronously, in trio's one thread, so it needs
no actor of its own; the ``Fanout`` actor (``_fanout.py``) owns which group is subscribed
where.

Overflow policy for a slow or stalled session, stated once:

1. A session's queue of notifications is its mailbox. Once it holds ``MAX_QUEUED_NOTICES``
   (256) messages (its client reads nothing, so its writer is stuck), further notifications
   are dropped for that session and counted; the first drop is logged once (WARNING).
2. After ``MAX_DROPPED_NOTICES`` (1,024) drops the session is closed, logged once: its
   stream is closed under the stuck write, and the client reconnects and lists afresh.
   (Both are ``trimcp.sessions.SessionHandle.notify_nowait``'s; the writer's own
   ``write_timeout`` closes a session that takes nothing for 60 s in any case.)
3. Neither publisher nor broadcaster ever waits for a session, so the other sessions see
   nothing of it. Memory stays bounded: at most 256 queued per session, 256 per topic.
4. A broadcaster ``topic_mailbox_size`` messages behind refuses ``publish_nowait``; that
   notification takes the direct way instead (logged once per topic).
"""

from __future__ import annotations

import logging
import typing
from typing import TYPE_CHECKING

from trimcp.errors import ActorError, LocalProtocolError, MailboxFull, TransportClosed
from trimcp.notify import (
    LOG_MESSAGES,
    PROMPTS_LIST_CHANGED,
    RESOURCE_UPDATED_PREFIX,
    RESOURCES_LIST_CHANGED,
    TOOLS_LIST_CHANGED,
    publish,
    publish_nowait,
    resource_topic,
)
from trimcp.protocol import Notification
from trimcp.sessions import LOG_LEVELS

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable

    from trimcp.actors import ActorRef
    from trimcp.notify import NotificationHub, Offered
    from trimcp.protocol import JsonObject, JsonValue
    from trimcp.sessions import SessionHandle

    #: Whether one session wants one notification (runs in the broadcaster's task).
    Wants = Callable[[SessionHandle, Notification], bool]

__all__ = ["STANDING_TOPICS", "SessionGroup", "SessionSet", "is_notification", "passes_level"]

logger = logging.getLogger(__name__)

#: The list_changed notifications, by method: their topic and the one message they need.
_LIST_CHANGED: dict[str, tuple[str, Notification]] = {
    f"notifications/{kind}/list_changed": (
        topic,
        Notification(method=f"notifications/{kind}/list_changed"),
    )
    for kind, topic in (
        ("tools", TOOLS_LIST_CHANGED),
        ("resources", RESOURCES_LIST_CHANGED),
        ("prompts", PROMPTS_LIST_CHANGED),
    )
}
#: Topics every session is in while the server has a hub (``resources/updated:<uri>`` come
#: and go with the URIs' subscribers).
STANDING_TOPICS = (TOOLS_LIST_CHANGED, RESOURCES_LIST_CHANGED, PROMPTS_LIST_CHANGED, LOG_MESSAGES)
_LEVEL_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}


def is_notification(message: object) -> bool:
    """The topic filter of a ``SessionGroup``: it takes ``Notification`` objects only."""
    return isinstance(message, Notification)


def passes_level(session: SessionHandle, message: Notification) -> bool:
    """Whether a ``notifications/message`` passes ``session``'s ``logging/setLevel`` level."""
    threshold = session.log_level
    if threshold is None:
        return True
    level = (message.params or {}).get("level")
    if not isinstance(level, str) or level not in _LEVEL_RANK:
        return True
    return _LEVEL_RANK[level] >= _LEVEL_RANK[threshold]


async def _notify(session: SessionHandle, method: str, params: JsonObject | None) -> bool:
    if not session.open:
        return False
    try:
        await session.notify(method, params)
    except (LocalProtocolError, TransportClosed) as exc:
        logger.debug("session %s: %s not sent: %s", session.session_id, method, exc)
        return False
    return True


def _post(sessions: Iterable[SessionHandle], note: Notification, wants: Wants | None) -> int:
    """Hand ``note`` to each session's mailbox without waiting; return how many took it."""
    posted = 0
    for session in tuple(sessions):
        if (wants is None or wants(session, note)) and session.notify_nowait(
            note.method, note.params
        ):
            posted += 1
    return posted


@typing.final
class SessionGroup:
    """The sessions of one server that want one topic, subscribed to it as one ``Subscriber``.

    ``offer`` hands a ``Notification`` to each member session's own mailbox
    (``notify_nowait``: never waits, drops for a session that is behind) and counts what
    became of it. Members are read from the ``SessionSet`` at delivery time. ``ref`` is the
    server's ``Fanout`` actor, which keeps the group subscribed; ``broadcaster`` is the
    topic's broadcaster while the group is subscribed to it, else None.

    Attributes:
        topic: the topic's name.
        broadcaster: the broadcaster holding this group, or None.
        delivered: notifications a session's mailbox took.
        dropped: notifications a session refused (behind, or closing).
        filtered: notifications a session did not want (its log level).
    """

    __slots__ = (
        "_keeper",
        "_sessions",
        "_uri",
        "_wants",
        "broadcaster",
        "delivered",
        "dropped",
        "filtered",
        "topic",
    )

    def __init__(self, topic: str, sessions: SessionSet, keeper: ActorRef) -> None:
        self.topic = topic
        self._sessions = sessions
        self._keeper = keeper
        self._uri = (
            topic.removeprefix(RESOURCE_UPDATED_PREFIX)
            if topic.startswith(RESOURCE_UPDATED_PREFIX)
            else None
        )
        self._wants: Wants | None = passes_level if topic == LOG_MESSAGES else None
        self.broadcaster: ActorRef | None = None
        self.delivered = 0
        self.dropped = 0
        self.filtered = 0

    def __repr__(self) -> str:
        where = self.broadcaster.name if self.broadcaster is not None else "not subscribed"
        return f"<SessionGroup {self.topic!r} ({where})>"

    @property
    def ref(self) -> ActorRef:
        """The server's ``Fanout`` actor: it answers for the group."""
        return self._keeper

    @property
    def name(self) -> str:
        """``<fanout actor>/<topic>``, for logs."""
        return f"{self._keeper.name}/{self.topic}"

    @property
    def open(self) -> bool:
        """True while the ``Fanout`` actor runs."""
        return self._keeper.alive

    @property
    def subscribed(self) -> bool:
        """True while the group is in a running broadcaster."""
        return self.broadcaster is not None and self.broadcaster.alive

    def offer(self, message: object) -> bool:
        """Hand ``message`` to every member session; always accepted (see ``offer_outcome``)."""
        return self.offer_outcome(message) == "queued"

    def offer_outcome(self, message: object) -> Offered:
        """Hand a ``Notification`` to each member session that wants it, without waiting.

        The group itself never falls behind, so the outcome is ``"queued"``; what each
        session did is counted in ``delivered``/``dropped``/``filtered`` (and a session that
        is behind logs and closes itself, module docstring). Other messages are ignored.
        """
        if not isinstance(message, Notification):
            return "queued"
        wants = self._wants
        for session in tuple(self._sessions.members(self._uri)):
            if wants is not None and not wants(session, message):
                self.filtered += 1
            elif session.notify_nowait(message.method, message.params):
                self.delivered += 1
            else:
                self.dropped += 1
        return "queued"


@typing.final
class SessionSet:
    """Open sessions, the resource URIs each subscribed to, and the way to notify them."""

    __slots__ = ("_behind", "_by_uri", "_groups", "_hub", "_keeper", "_request", "_sessions")

    def __init__(self) -> None:
        # The URI set of a session is made on its first subscription (most never subscribe).
        self._sessions: dict[SessionHandle, set[str] | None] = {}
        # URI -> its subscribers, in subscription order (a dict as an ordered set).
        self._by_uri: dict[str, dict[SessionHandle, None]] = {}
        # While a ``Fanout`` is attached: it, its hub, how to ask it to look at a topic, and
        # the groups it keeps subscribed (topic -> group).
        self._keeper: ActorRef | None = None
        self._hub: NotificationHub | None = None
        self._request: Callable[[str], None] | None = None
        self._groups: dict[str, SessionGroup] = {}
        self._behind: set[str] = set()

    def __len__(self) -> int:
        return len(self._sessions)

    # --- sessions and subscriptions --------------------------------------------------------

    def opened(self, session: SessionHandle) -> None:
        """Track a new session: from now on it is in every standing topic."""
        self._sessions.setdefault(session, None)

    def closed(self, session: SessionHandle) -> None:
        """Forget a session and its subscriptions."""
        for uri in self._sessions.pop(session, None) or ():
            self._leave(session, uri)

    def subscribe(self, session: SessionHandle, uri: str) -> None:
        """Record that ``session`` wants ``notifications/resources/updated`` for ``uri``.

        Ignored for a session that has begun to close (a late request must not bring a
        forgotten session back).
        """
        if not session.open:
            return
        uris = self._sessions.get(session)
        if uris is None:
            uris = self._sessions[session] = set()
        uris.add(uri)
        members = self._by_uri.get(uri)
        if members is None:
            members = self._by_uri[uri] = {}
            self._ask(resource_topic(uri))
        members[session] = None

    def unsubscribe(self, session: SessionHandle, uri: str) -> None:
        """Drop one subscription (unknown ones are ignored)."""
        uris = self._sessions.get(session)
        if uris is None or uri not in uris:
            return
        uris.discard(uri)
        if not uris:
            self._sessions[session] = None
        self._leave(session, uri)

    def _leave(self, session: SessionHandle, uri: str) -> None:
        members = self._by_uri.get(uri)
        if members is None:
            return
        members.pop(session, None)
        if not members:
            del self._by_uri[uri]
            self._ask(resource_topic(uri))

    def subscribers(self, uri: str) -> list[SessionHandle]:
        """Return the sessions subscribed to ``uri``."""
        return list(self._by_uri.get(uri, ()))

    def subscribed_uris(self) -> Collection[str]:
        """Return the URIs some session is subscribed to now (a view)."""
        return self._by_uri.keys()

    def members(self, uri: str | None) -> Collection[SessionHandle]:
        """Return the sessions subscribed to ``uri``, or every session for None (a view)."""
        if uri is None:
            return self._sessions.keys()
        return self._by_uri.get(uri, {}).keys()

    # --- the hub (used by the ``Fanout`` actor) --------------------------------------------

    @property
    def hub(self) -> NotificationHub | None:
        """The hub notifications go through, or None (the direct way only)."""
        return self._hub

    @property
    def groups(self) -> dict[str, SessionGroup]:
        """The groups of the attached ``Fanout``, by topic (empty without one)."""
        return self._groups

    def attach(
        self, keeper: ActorRef, hub: NotificationHub, request: Callable[[str], None]
    ) -> ActorRef | None:
        """Let ``keeper`` (a ``Fanout``) take the sessions to ``hub``.

        ``request(topic)`` asks it, without waiting, to subscribe or unsubscribe the group of
        a topic whose membership began or ended. Returns None, or the ``Fanout`` attached
        already (a live one keeps the place).
        """
        current = self._keeper
        if current is not None and current != keeper and current.alive:
            return current
        self._keeper, self._hub, self._request = keeper, hub, request
        self._groups = {}
        self._behind.clear()
        return None

    def detach(self, keeper: ActorRef) -> list[ActorRef]:
        """Go back to the direct way, if ``keeper`` is attached; return its broadcasters."""
        if self._keeper != keeper:
            return []
        refs = [
            group.broadcaster for group in self._groups.values() if group.broadcaster is not None
        ]
        self._keeper = self._hub = self._request = None
        self._groups = {}
        return refs

    def wanted(self) -> list[str]:
        """Return the topics that should have a subscribed group now."""
        return [*STANDING_TOPICS, *(resource_topic(uri) for uri in self._by_uri)]

    def wants(self, topic: str) -> bool:
        """Whether ``topic`` should have a subscribed group now."""
        if topic.startswith(RESOURCE_UPDATED_PREFIX):
            return topic.removeprefix(RESOURCE_UPDATED_PREFIX) in self._by_uri
        return topic in STANDING_TOPICS

    def group(self, topic: str) -> SessionGroup:
        """Return the attached ``Fanout``'s group for ``topic``, making it if needed.

        Raises:
            LookupError: no ``Fanout`` is attached.
        """
        group = self._groups.get(topic)
        if group is None:
            if self._keeper is None:
                raise LookupError("no Fanout is attached to these sessions")
            group = self._groups[topic] = SessionGroup(topic, self, self._keeper)
        return group

    def release(self, topic: str) -> SessionGroup | None:
        """Remove and return ``topic``'s group if it is no longer wanted."""
        if self.wants(topic):
            return None
        return self._groups.pop(topic, None)

    def _ask(self, topic: str) -> None:
        if self._request is not None:
            self._request(topic)

    # --- publishing ------------------------------------------------------------------------

    def broadcast_soon(self, method: str) -> int:
        """Post a parameterless notification to every open session; return how many.

        Through the hub for the list_changed kinds when their group is subscribed (then the
        count is the sessions it goes to), else posted to each session directly.
        """
        found = _LIST_CHANGED.get(method)
        if found is not None and self._publish_nowait(*found):
            return len(self._sessions)
        return sum(session.notify_nowait(method) for session in tuple(self._sessions))

    async def resource_updated(self, uri: str) -> int:
        """Send ``notifications/resources/updated`` for ``uri`` to its subscribers.

        Returns how many sessions it was sent (or, through the hub, handed) to.
        """
        members = self._by_uri.get(uri)
        if not members:
            return 0
        note = Notification(method="notifications/resources/updated", params={"uri": uri})
        if await self._publish(resource_topic(uri), note):
            return len(members)
        if self._keeper is None:
            return await self.notify(note.method, note.params, to=list(members))
        return _post(members, note, None)

    async def log(self, level: str, data: JsonValue, logger_name: str | None = None) -> int:
        """Send ``notifications/message`` to every session whose level ``level`` passes.

        Returns how many sessions it was handed to directly; through the hub (which filters
        in the broadcaster's task) the count is every session.

        Raises:
            ValueError: ``level`` is not an RFC 5424 level name.
        """
        if level not in _LEVEL_RANK:
            raise ValueError(f"unknown log level {level!r}; expected one of {LOG_LEVELS}")
        params: JsonObject = {"level": level, "data": data}
        if logger_name is not None:
            params["logger"] = logger_name
        note = Notification(method="notifications/message", params=params)
        if await self._publish(LOG_MESSAGES, note):
            return len(self._sessions)
        return _post(self._sessions, note, passes_level)

    async def notify(
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        to: Iterable[SessionHandle] | None = None,
    ) -> int:
        """Send a notification to ``to`` (default: every session); return how many got it.

        The direct way without a hub: sessions are served one after another, and a full
        write queue makes this wait.
        """
        targets = list(self._sessions if to is None else to)
        sent = 0
        for session in targets:
            sent += await _notify(session, method, params)
        return sent

    def _broadcaster(self, topic: str) -> ActorRef | None:
        """The broadcaster to publish ``topic`` to, or None: then the direct way."""
        group = self._groups.get(topic)
        ref = None if group is None else group.broadcaster
        if ref is None and self._keeper is not None and self.wants(topic):
            self._ask(topic)  # not subscribed (yet, or any more): ask again, harmlessly
        return ref

    def _publish_nowait(self, topic: str, note: Notification) -> bool:
        ref = self._broadcaster(topic)
        if ref is None:
            return False
        try:
            publish_nowait(ref, note)
        except MailboxFull:
            if topic not in self._behind:
                self._behind.add(topic)
                logger.warning(
                    "topic %s is %s messages behind; notifying its sessions directly meanwhile",
                    topic,
                    self._hub.topic_mailbox_size if self._hub is not None else "many",
                )
            return False
        except ActorError:  # it ended just now; the Fanout hears of it and subscribes again
            return False
        return True

    async def _publish(self, topic: str, note: Notification) -> bool:
        ref = self._broadcaster(topic)
        if ref is None:
            return False
        try:
            await publish(ref, note)
        except ActorError:
            return False
        return True
