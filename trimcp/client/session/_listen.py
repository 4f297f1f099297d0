"""``Listener``: the ``subscriptions/listen`` stream a session keeps open to a modern server.

MCP 2026-07-28 replaced the GET stream and ``resources/subscribe`` with one long-lived
request: ``subscriptions/listen`` names the notifications the client opts in to, the server
first sends ``notifications/subscriptions/acknowledged`` with the subset it honours, then
each notification, all carrying ``_meta["io.modelcontextprotocol/subscriptionId"]``: the
listen request's JSON-RPC id (Basic > Patterns > Subscriptions,
https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions).

The listener opens one stream for what the session wants (the ``list_changed``
notifications the server declares, and the resources ``subscribe_resource`` named).
Changing what is wanted opens a new stream, and the old one is cancelled only once the new
one is acknowledged, so nothing is missed in between; notifications are delivered only for
the current stream (``accept``), so nothing arrives twice. A stream that drops without the
server's closing answer is opened again after a backoff (0.5 s doubling to 30 s, reset once
a stream stayed up a minute), and ``on_gap`` is told that notifications may have been
missed meanwhile. One the server ends gracefully (its closing answer: a shutdown, say) is
treated alike, though not as a failure: the server may well come back at the same place,
and it sends no ``list_changed`` for what it changed while away. A server that refuses
``subscriptions/listen`` altogether (-32601, -32021) is not asked again: that is logged once.
Cancelling a stream is the core's cancellation: ``notifications/cancelled`` on stdio, the
response stream closed on HTTP.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Final, final

import trio

from trimcp.errors import ConnectionLost, JsonRpcError, TransportClosed
from trimcp.protocol import META_SUBSCRIPTION_ID

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.protocol import JsonObject, Notification, RequestId, ServerCapabilities

    from ._core import SessionCore

__all__ = ["Listener", "listen_delay", "subscription_id"]

logger = logging.getLogger(__name__)

ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
#: Seconds a stream must stay up before its drops stop counting towards the backoff.
STABLE_AFTER: Final = 60.0
# Error codes that mean the server will not serve this listen request at all.
_REFUSALS: Final = frozenset({-32601, -32021, -32602})


def listen_delay(drops: int) -> float:
    """Return the seconds to wait before reopening after ``drops`` drops in a row."""
    return min(30.0, 0.5 * 2.0 ** max(0, drops - 1))


def subscription_id(notification: Notification) -> RequestId | None:
    """Return the subscription a notification belongs to, None for a request-scoped one."""
    params = notification.params
    meta = params.get("_meta") if params is not None else None
    value = meta.get(META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return value


@final
class _Stream:
    """One ``subscriptions/listen`` request, from its sending to its end."""

    def __init__(self, notifications: JsonObject, version: int) -> None:
        self.notifications = notifications
        self.version = version  # of the wanted set it asks for
        self.scope = trio.CancelScope()
        self.request_id: RequestId | None = None
        self.acked = trio.Event()
        self.honoured: JsonObject = {}
        self.ended = trio.Event()
        self.refusal: JsonRpcError | None = None
        self.acked_at = math.inf  # never acknowledged: its end is a failed attempt

    def sent(self, request_id: RequestId) -> None:
        self.request_id = request_id


@final
class Listener:
    """The session's subscriptions (module docstring). ``run`` in the session's nursery."""

    def __init__(
        self,
        core: SessionCore,
        capabilities: ServerCapabilities,
        on_gap: Callable[[], object] | None = None,
    ) -> None:
        self._core = core
        # Called when a stream drops without the server's closing answer: notifications may
        # have been missed until the next one is acknowledged (the session drops its cached
        # lists then: a restarted server sends no list_changed for what it changed).
        self._on_gap = on_gap
        self._base: JsonObject = {
            key: True
            for key, on in (
                ("toolsListChanged", capabilities.tools_list_changed),
                ("promptsListChanged", capabilities.prompts_list_changed),
                ("resourcesListChanged", capabilities.resources_list_changed),
            )
            if on
        }
        self._uris: list[str] = []
        self._version = 0  # of the wanted set; each change adds one
        self._streams: list[_Stream] = []
        self._current: _Stream | None = None
        self._wake = trio.Event()
        self._changed = trio.Event()  # set (and replaced) whenever a stream is acked or ends
        self._refused: JsonRpcError | None = None
        self._closed = False
        # Unexpected ends in a row (reset by a stream that stayed up), and whether the loop
        # owes a backoff before the next attempt.
        self._drops = 0
        self._failed = False

    # --- what the session calls ---------------------------------------------------------

    @property
    def current_id(self) -> RequestId | None:
        """The JSON-RPC id of the acknowledged stream whose notifications are delivered."""
        current = self._current
        return None if current is None else current.request_id

    async def wait_listening(self) -> None:
        """Wait until a stream is acknowledged, or the listener gave up (refused, closed)."""
        while self._current is None and not self._closed and self._refused is None:
            await self._changed_wait()

    async def subscribe(self, uri: str, timeout: float) -> None:
        """Add ``uri`` and wait until a stream including it is acknowledged.

        Raises:
            JsonRpcError: the server refuses ``subscriptions/listen``.
            trio.TooSlowError: no acknowledgement within ``timeout``.
        """
        if uri not in self._uris:
            self._uris.append(uri)
        await self._apply(timeout)
        current = self._current
        honoured = current.honoured.get("resourceSubscriptions") if current else None
        if not isinstance(honoured, list) or uri not in honoured:
            logger.warning("the server did not acknowledge the subscription to %s", uri)

    async def unsubscribe(self, uri: str, timeout: float) -> None:
        """Drop ``uri`` and wait until a stream without it replaced the current one."""
        if uri in self._uris:
            self._uris.remove(uri)
            await self._apply(timeout)

    def accept(self, notification: Notification, sid: RequestId) -> bool:
        """Tell whether to deliver a notification of subscription ``sid``; note acks.

        Called by the session's notification task, in arrival order: an acknowledgement
        makes its stream the current one at once (and cancels the one before).
        """
        if notification.method == ACKNOWLEDGED:
            self._acknowledged(notification, sid)
            return False
        current = self._current
        return current is not None and current.request_id == sid

    # --- the task -----------------------------------------------------------------------

    async def run(self) -> None:
        """Keep a stream open for what is wanted, until the session ends or it is refused."""
        async with trio.open_nursery() as nursery:
            while not self._closed and self._refused is None:
                if self._failed:
                    self._failed = False
                    await trio.sleep(listen_delay(self._drops))
                    continue
                if self._wanted() and self._needs_stream():
                    stream = _Stream(self._filter(), self._version)
                    self._streams.append(stream)
                    nursery.start_soon(self._serve, stream)
                self._wake = trio.Event()
                await self._wake.wait()
            nursery.cancel_scope.cancel()

    # --- inside ---------------------------------------------------------------------------

    def _wanted(self) -> bool:
        return bool(self._base or self._uris)

    def _filter(self) -> JsonObject:
        wanted: JsonObject = dict(self._base)
        if self._uris:
            wanted["resourceSubscriptions"] = list(self._uris)
        return wanted

    def _needs_stream(self) -> bool:
        """Whether no stream (current or opening) asks for the latest wanted set."""
        return not any(s.version == self._version for s in self._streams)

    async def _apply(self, timeout: float) -> None:
        self._version += 1
        version = self._version
        self._wake.set()
        with trio.fail_after(timeout):
            while True:
                if self._refused is not None:
                    raise self._refused
                if self._closed:
                    raise TransportClosed("the session's subscriptions ended with it")
                current = self._current
                if current is not None and current.version >= version:
                    return
                await self._changed_wait()

    async def _changed_wait(self) -> None:
        await self._changed.wait()

    def _signal(self) -> None:
        self._changed.set()
        self._changed = trio.Event()
        self._wake.set()

    def _acknowledged(self, notification: Notification, sid: RequestId) -> None:
        stream = next((s for s in self._streams if s.request_id == sid), None)
        if stream is None or stream.acked.is_set() or stream.ended.is_set():
            return
        current = self._current
        if current is not None and current.version > stream.version:
            stream.scope.cancel()  # a newer set is already being listened for
            return
        honoured = (notification.params or {}).get("notifications")
        stream.honoured = honoured if isinstance(honoured, dict) else {}
        stream.acked_at = trio.current_time()
        stream.acked.set()
        previous, self._current = self._current, stream
        if previous is not None and previous is not stream:
            previous.scope.cancel()  # replaced: its notifications are no longer delivered
        for older in self._streams:
            if older is not stream and older.version < stream.version:
                older.scope.cancel()  # an opening stream for an older set, not needed now
        self._signal()

    async def _serve(self, stream: _Stream) -> None:
        params: JsonObject = {"notifications": stream.notifications}
        graceful = False
        with stream.scope:
            try:
                await self._core.request(
                    "subscriptions/listen", params, timeout=math.inf, on_sent=stream.sent
                )
                graceful = True
            except (ConnectionLost, TransportClosed):
                self._closed = True
            except JsonRpcError as exc:
                if exc.code in _REFUSALS:
                    logger.info("the server does not serve subscriptions/listen: %s", exc)
                    self._refused = exc
                else:
                    logger.debug("the subscriptions/listen stream dropped: %s", exc)
        stream.ended.set()
        self._streams.remove(stream)
        if self._current is stream:
            self._current = None
        if graceful:
            logger.info("the server closed the subscriptions/listen stream")
        if not (stream.scope.cancelled_caught or self._closed or self._refused):
            if stream.acked.is_set() and self._on_gap is not None:
                self._on_gap()
            if trio.current_time() - stream.acked_at >= STABLE_AFTER:
                self._drops = 0
            self._drops += 1
            self._failed = True
        self._signal()
