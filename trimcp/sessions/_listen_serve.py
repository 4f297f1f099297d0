"""Serving one ``subscriptions/listen`` request (MCP 2026-07-28), for any server.

The request stays open: first ``notifications/subscriptions/acknowledged`` with the subset
of the client's filter the server will honour, then each notification the client opted in
to, every one tagged with ``_meta["io.modelcontextprotocol/subscriptionId"]`` (the listen
request's id), until the client closes it or the listener is dropped; then the graceful
answer ``{resultType: "complete", _meta: {subscriptionId}}`` (Basic > Patterns >
Subscriptions,
https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions).

A graceful stop of the application (``trimcp.supervision.Drain``) ends every listen stream
with that graceful answer: the stream is work in flight until its answer is written, so the
drain waits for it, and it ends at once when the drain begins.

A server lends its broadcasts through a ``ListenHost``: it adds the listener's
``SessionHandle`` where its list-changed notifications go, subscribes it to the URIs it can
watch, and removes it again. The ``Listener`` (``_listen.py``) keeps only what was asked
for, bounded like a session's mailbox.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Protocol

import trio

from trimcp.errors import InvalidParams
from trimcp.protocol import META_SUBSCRIPTION_ID, ServerConnection
from trimcp.supervision import current_drain

from ._context import SessionHandle
from ._listen import Listener
from ._options import server_options

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from trimcp.protocol import Implementation, JsonObject, JsonValue, ServerCapabilities

    from ._context import RequestContext

    #: Sends one notification on the listen stream (tagged with the subscription id).
    Send = Callable[[str, JsonObject | None], Awaitable[None]]

__all__ = ["ListenExtra", "ListenHost", "serve_listen"]

# Filter member -> (the notification it lets through, the capability flag it needs).
_LIST_FILTERS: Final = (
    ("toolsListChanged", "notifications/tools/list_changed", "tools_list_changed"),
    ("promptsListChanged", "notifications/prompts/list_changed", "prompts_list_changed"),
    ("resourcesListChanged", "notifications/resources/list_changed", "resources_list_changed"),
)


class ListenHost(Protocol):
    """How a server's broadcasts reach a listener."""

    def join(self, listener: SessionHandle) -> None:
        """Send the listener what the server's sessions get (list changes)."""
        ...

    async def subscribe(self, listener: SessionHandle, uri: str) -> bool:
        """Send it ``notifications/resources/updated`` for ``uri``; False: no such resource."""
        ...

    def leave(self, listener: SessionHandle) -> None:
        """Forget the listener and its subscriptions. Must not raise."""
        ...


class _Ending:
    """A listen stream as a participant of the application's drain."""

    __slots__ = ("_listener", "running")

    def __init__(self, listener: Listener) -> None:
        self._listener = listener
        self.running = True

    @property
    def in_flight(self) -> int:
        return 1 if self.running else 0

    def begin_drain(self) -> None:
        self._listener.end()  # the loop ends and the graceful answer goes out

    def abort_in_flight(self, reason: str) -> None:
        self._listener.end()


class ListenExtra(Protocol):
    """A filter member of an extension (the Tasks extension's ``taskIds``), and its feed."""

    def accept(self, wanted: JsonObject, context: RequestContext) -> JsonObject | None:
        """Read the client's filter; return the members honoured (for the acknowledgement),
        or None if it asked for nothing of this extension.

        Raises:
            JsonRpcError: the member is malformed or needs a capability not declared.
        """
        ...

    async def run(self, send: Send) -> None:
        """Feed the stream (after the acknowledgement) until cancelled."""
        ...


def _filter(capabilities: ServerCapabilities, wanted: JsonObject) -> tuple[JsonObject, list[str]]:
    """Return the honoured list filters and the notifications they let through.

    Raises:
        InvalidParams: a member is not a boolean.
    """
    honored: JsonObject = {}
    methods: list[str] = []
    for member, notification, flag in _LIST_FILTERS:
        value = wanted.get(member)
        if value is not None and not isinstance(value, bool):
            raise InvalidParams(
                f"params.notifications.{member} must be true or false", {"param": member}
            )
        if value and getattr(capabilities, flag):
            honored[member] = True
            methods.append(notification)
    return honored, methods


def _uris(wanted: JsonObject) -> list[str]:
    uris = wanted.get("resourceSubscriptions")
    if uris is None:
        return []
    if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
        raise InvalidParams(
            "params.notifications.resourceSubscriptions must be an array of resource URIs",
            {"param": "resourceSubscriptions"},
        )
    return [str(uri) for uri in dict.fromkeys(uris)]


def _wanted(params: JsonObject) -> JsonObject:
    wanted = params.get("notifications")
    if not isinstance(wanted, dict):
        raise InvalidParams(
            "params.notifications must be an object naming what to receive, e.g. "
            '{"toolsListChanged": true, "resourceSubscriptions": ["file:///a.txt"]}',
            {"param": "notifications"},
        )
    return wanted


def _accepted(
    extras: Sequence[ListenExtra], wanted: JsonObject, context: RequestContext, honored: JsonObject
) -> list[ListenExtra]:
    """Let each extension read the filter; return those that feed this stream."""
    feeds: list[ListenExtra] = []
    for extra in extras:
        accepted = extra.accept(wanted, context)
        if accepted is not None:
            honored.update(accepted)
            feeds.append(extra)
    return feeds


async def serve_listen(  # noqa: PLR0913 - the request, and what the server lends it
    context: RequestContext,
    params: JsonObject,
    host: ListenHost,
    server_info: Implementation,
    capabilities: ServerCapabilities,
    *,
    extras: Sequence[ListenExtra] = (),
) -> JsonObject:
    """Serve one listen request until it ends (see the module docstring).

    Raises:
        InvalidParams: ``notifications`` is missing or malformed.
        JsonRpcError: an extension refused its part of the filter.
    """
    wanted = _wanted(params)
    meta = context.session.request_meta
    if meta is None:
        raise InvalidParams("subscriptions/listen is a 2026-07-28 request: send its _meta")
    declared = context.session.server_capabilities
    honored, methods = _filter(declared, wanted)
    requested = _uris(wanted)
    feeds = _accepted(extras, wanted, context, honored)
    connection = ServerConnection.for_request(
        server_info, capabilities, server_options(None, 1 << 20, False), meta
    )
    watching = bool(requested) and declared.resources_subscribe
    if watching:
        methods.append("notifications/resources/updated")
    listener = Listener(connection, context.request_id, methods, requested, context.identity)
    handle = SessionHandle(listener)
    subscription: JsonObject = {META_SUBSCRIPTION_ID: context.request_id}

    async def send(method: str, note: JsonObject | None) -> None:
        body: JsonObject = dict(note or {})
        own = body.get("_meta")
        body["_meta"] = {**(own if isinstance(own, dict) else {}), **subscription}
        await context.session.notify(method, body)

    drain = current_drain()
    ending = _Ending(listener)
    if drain is not None:
        drain.add(ending)
    try:
        if watching:
            subscribed = [uri for uri in requested if await host.subscribe(handle, uri)]
            honored["resourceSubscriptions"] = list["JsonValue"](subscribed)
        # Joined before the acknowledgement, so that no change made once the client has it
        # is lost; what arrives meanwhile waits in the listener, written after it.
        host.join(handle)
        await context.session.notify(
            "notifications/subscriptions/acknowledged",
            {"notifications": honored, "_meta": subscription},
        )
        async with trio.open_nursery() as nursery:
            for feed in feeds:
                nursery.start_soon(feed.run, send)
            while (item := await listener.next()) is not None:
                await send(*item)
            nursery.cancel_scope.cancel()
    finally:
        listener.end()
        host.leave(handle)
        ending.running = False
        if drain is not None:
            drain.discard(ending)
    return {"_meta": subscription, "resultType": "complete"}
