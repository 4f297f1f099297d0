"""Notification fan-out as actors: one ``Broadcaster`` per topic, one ``Subscription`` per stream.

A topic is a named stream of notifications: ``tools/list_changed`` and its two siblings,
``resources/updated:<uri>`` (one per resource URI), ``log``. A subscription stands for one
subscriber stream (an SSE response, a WebSocket, stdio) and delivers to it through a *sink*,
an async function that writes one message. Publishers never wait for subscribers: each
subscription has a bounded queue, and a slow or stalled one drops messages, counts them, and
after ``max_dropped`` drops within ``drop_window`` seconds is disconnected, logged once
(``SlowConsumerPolicy``; defaults: queue 256, 256 drops within 60 s).

Where things run (``NotificationHub.spec()`` is the "Broadcasters" node of the daemon's
supervisor tree)::

    <name>                     Supervisor, rest_for_one
    ├── <name>.topics          Supervisor, simple_one_for_one
    │   └── Broadcaster x T    temporary; started by its first subscriber, stops itself
    │                          after lingering empty (5 s), registered "<name>.topic:<topic>"
    └── <name>.subscriptions   Supervisor, simple_one_for_one
        └── Subscription x M   temporary; exists only while its stream is attached

Typical use, in a stream handler::

    async with hub.open_subscription(write_event, topics=[TOOLS_LIST_CHANGED],
                                     on_close=lambda cause: stream_done.set()) as sub:
        await hub.subscribe(resource_topic(uri), sub)
        await stream_done.wait()

and in a publisher: ``hub.publish_nowait(TOOLS_LIST_CHANGED, message)``.

A topic's subscribers need not be ``Subscription`` actors: any ``Subscriber`` (a non-blocking
``offer`` and an actor that answers for it) will do. ``trimcp.server`` subscribes its sessions
that way, through the sessions' own mailboxes, so an idle session costs a topic nothing.

Not here: what the messages are (the server layer publishes them, encoded as it likes), and
writing them to a transport (the sink does). This package imports the actor runtime and
supervision only, nothing from protocol, transports, sessions or server.
"""

from ._broadcaster import DEFAULT_LINGER as DEFAULT_LINGER
from ._broadcaster import Broadcaster as Broadcaster
from ._broadcaster import BroadcasterStatistics as BroadcasterStatistics
from ._broadcaster import Filter as Filter
from ._broadcaster import publish as publish
from ._broadcaster import publish_nowait as publish_nowait
from ._broadcaster import subscribe as subscribe
from ._broadcaster import topic_statistics as topic_statistics
from ._broadcaster import unsubscribe as unsubscribe
from ._hub import NotificationHub as NotificationHub
from ._policy import DEFAULT_POLICY as DEFAULT_POLICY
from ._policy import CloseCause as CloseCause
from ._policy import DropWindow as DropWindow
from ._policy import SlowConsumerPolicy as SlowConsumerPolicy
from ._policy import close_cause as close_cause
from ._policy import record_drop as record_drop
from ._subscriber import Offered as Offered
from ._subscriber import Subscriber as Subscriber
from ._subscription import OnClose as OnClose
from ._subscription import Sink as Sink
from ._subscription import Subscription as Subscription
from ._subscription import SubscriptionRef as SubscriptionRef
from ._subscription import SubscriptionStatistics as SubscriptionStatistics
from ._subscription import spawn_subscription as spawn_subscription
from ._topics import LOG_MESSAGES as LOG_MESSAGES
from ._topics import PROMPTS_LIST_CHANGED as PROMPTS_LIST_CHANGED
from ._topics import RESOURCE_UPDATED_PREFIX as RESOURCE_UPDATED_PREFIX
from ._topics import RESOURCES_LIST_CHANGED as RESOURCES_LIST_CHANGED
from ._topics import TOOLS_LIST_CHANGED as TOOLS_LIST_CHANGED
from ._topics import resource_topic as resource_topic

__all__ = [
    "DEFAULT_LINGER",
    "DEFAULT_POLICY",
    "LOG_MESSAGES",
    "PROMPTS_LIST_CHANGED",
    "RESOURCES_LIST_CHANGED",
    "RESOURCE_UPDATED_PREFIX",
    "TOOLS_LIST_CHANGED",
    "Broadcaster",
    "BroadcasterStatistics",
    "CloseCause",
    "DropWindow",
    "Filter",
    "NotificationHub",
    "Offered",
    "OnClose",
    "Sink",
    "SlowConsumerPolicy",
    "Subscriber",
    "Subscription",
    "SubscriptionRef",
    "SubscriptionStatistics",
    "close_cause",
    "publish",
    "publish_nowait",
    "record_drop",
    "resource_topic",
    "spawn_subscription",
    "subscribe",
    "topic_statistics",
    "unsubscribe",
]
