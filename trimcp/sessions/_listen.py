"""A ``subscriptions/listen`` stream (MCP 2026-07-28) as the server's broadcasts see it.

2026-07-28 replaced the session's GET stream and ``resources/subscribe`` with one request,
``subscriptions/listen``, whose response stream carries the list-changed and
resource-updated notifications the client opted in to, until either side ends it (Basic >
Patterns > Subscriptions,
https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions).

The server's broadcasts reach sessions through ``SessionHandle.notify_nowait`` (and the
direct ``notify``): a ``Listener`` is a ``SessionPort`` whose "session" is that stream, so
``SessionSet`` counts it among its members and subscribes it to URIs like any session, and
the same slow-consumer policy holds: at most ``MAX_QUEUED_NOTICES`` notifications wait for
a listener; past that they are dropped for it, and after ``MAX_DROPPED_NOTICES`` drops it is
abandoned (its stream ends; the client may listen again). The direct way (``notify``, which
a session answers by waiting for room) takes the same bound here, as a listener never waits.
It keeps only what the client asked for; the request that opened it (``trimcp.server``)
reads them with ``next`` and writes them on its own stream, tagged with the subscription id.

Abandoning a listener ends its request too (``ModernRequest.abandon``, found as the request
being served where the listener was made): a client that reads nothing leaves the request
stuck in a write that ``next`` returning None would never reach, and its stream (and the
listener's place among the server's broadcasts) would outlive the drop.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING, final

import orjson
import trio

from trimcp.errors import LocalProtocolError

from ._context import SessionHandle
from ._modern import serving_request

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Collection

    from trimcp.auth import Identity
    from trimcp.protocol import JsonObject, JsonValue, RequestId, RequestMeta, ServerConnection

    from ._port import ProgressCallback

__all__ = ["Listener"]

logger = logging.getLogger(__name__)


@final
class Listener:
    """One listen stream's queue of wanted notifications (see the module docstring)."""

    __slots__ = (
        # The slow-consumer policy counts drops per port in a WeakKeyDictionary
        # (``SessionHandle.notify_nowait``): a listener must be weakly referenceable.
        "__weakref__",
        "_ended",
        "_identity",
        "_methods",
        "_owner",
        "_queue",
        "_ready",
        "_uris",
        "connection",
        "log_level",
        "meta",
        "subscription_id",
    )

    def __init__(
        self,
        connection: ServerConnection,
        subscription_id: RequestId,
        methods: Collection[str],
        uris: Collection[str],
        identity: Identity | None = None,
    ) -> None:
        #: The listen request's own connection: ``SessionHandle.open`` reads its phase.
        self.connection = connection
        self.subscription_id = subscription_id
        # A listen stream carries no log messages: those belong to their requests.
        self.log_level: str | None = None
        self.meta: RequestMeta | None = None
        self._methods = frozenset(methods)
        self._uris = frozenset(uris)
        self._identity = identity
        self._queue: deque[tuple[str, JsonObject | None]] = deque()
        self._ready = trio.Event()
        self._ended = False
        # The listen request this stream belongs to (None: made outside one), ended with it.
        self._owner = serving_request()

    async def next(self) -> tuple[str, JsonObject | None] | None:
        """Wait for the next notification; None once the listener was abandoned."""
        while not self._queue:
            if self._ended:
                return None
            await self._ready.wait()
            self._ready = trio.Event()
        return self._queue.popleft()

    def end(self) -> None:
        """Stop taking notifications (the stream ended); wake a waiting ``next``."""
        self._ended = True
        self.connection.close()
        self._ready.set()

    # --- SessionPort ------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """How logs name this listener."""
        return f"listener {self.subscription_id!r}"

    @property
    def identity(self) -> Identity | None:
        """Whom the listen request's token spoke for, if one was checked."""
        return self._identity

    @property
    def backlog(self) -> int:
        """Notifications waiting to be written on the stream."""
        return len(self._queue)

    def post_notification(self, method: str, params: JsonObject | None) -> bool:
        """Queue a notification if the client asked for its kind; never waits."""
        if self._ended:
            return False
        if method not in self._methods:
            return True  # not for this stream: nothing lost
        if method == "notifications/resources/updated":
            uri = (params or {}).get("uri")
            if uri not in self._uris:
                return True
        self._queue.append((method, params))
        self._ready.set()
        return True

    async def write(
        self, data: bytes, related: RequestId | None = None, *, final: bool = False
    ) -> bool:
        """Take an encoded notification (the broadcasts' direct way) as ``write_now``."""
        return self.write_now(data)

    def write_now(self, data: bytes, related: RequestId | None = None) -> bool:
        """Queue an encoded notification at once, under the slow-consumer bound; never waits.

        Returns False if it was not queued (not a notification, ended, or dropped).
        """
        message = orjson.loads(data) if data else None
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return False
        params = message.get("params")
        # Through notify_nowait: the bound and the drop count of the broadcasts' own way.
        return SessionHandle(self).notify_nowait(
            message["method"], params if isinstance(params, dict) else None
        )

    async def send_log(
        self,
        level: str,
        data: JsonValue,
        logger_name: str | None,
        related: RequestId | None = None,
    ) -> bool:
        """Never: log messages go with their requests, not on a listen stream."""
        return False

    def start_soon(self, fn: Callable[[], Awaitable[object]]) -> None:
        """Refuse: a listener runs nothing of its own.

        Raises:
            LocalProtocolError: always.
        """
        raise LocalProtocolError("a subscriptions/listen stream runs no background work")

    async def request(
        self,
        method: str,
        params: JsonObject | None,
        *,
        timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> JsonObject:
        """Refuse: 2026-07-28 has no server-to-client requests.

        Raises:
            LocalProtocolError: always.
        """
        raise LocalProtocolError(f"cannot send {method} on a subscriptions/listen stream")

    def close_request_stream(self, request_id: RequestId) -> bool:
        """No resumable streams in 2026-07-28."""
        return False

    def abandon(self) -> None:
        """A listener that does not keep up: end it and its request (the module docstring).

        The client may listen again.
        """
        if not self._ended:
            logger.warning(
                "%s: the client does not read its notifications; ending the stream", self.name
            )
        self.end()
        if self._owner is not None:
            self._owner.abandon()
