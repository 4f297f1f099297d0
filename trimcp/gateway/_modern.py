"""The gateway's answers to per-request (MCP 2026-07-28) clients.

A 2026-07-28 client reaches the gateway without a session (``trimcp.sessions.ModernRequest``
over HTTP, ``ModernLane`` over stdio), and the gateway answers it from the same view of its
backends as a session's requests (MCP 2026-07-28,
https://modelcontextprotocol.io/specification/2026-07-28/basic):

* ``server/discover`` describes the gateway (``trimcp.protocol.discover_result``);
* the methods the revision removed (``ping``, ``logging/setLevel``, ``resources/subscribe``
  and friends) are -32601; ``subscriptions/listen`` takes their place: the listener joins
  the gateway's sessions for list changes, and its URIs go through the same
  reference-counted backend subscriptions as a session's;
* every result carries ``resultType`` and cacheable ones ``ttlMs``/``cacheScope``; an
  unknown resource is -32602 (the revision forbids -32002, which a 2025-11-25 backend may
  still send: it is translated too).

What a backend asks its caller while serving ``tools/call``, ``prompts/get`` or
``resources/read`` (sampling, elicitation, roots) reaches a 2026-07-28 client as an
``InputRequiredResult``, its backend call parked until the retry (``_parked.py``). Asked
during any other request (``completion/complete``), it is refused as a client that declared
nothing would refuse it (``_relay.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

from trimcp.errors import InvalidParams, JsonRpcError, MethodNotFound, ResourceNotFound
from trimcp.protocol import HANDSHAKE_ONLY_METHODS, discover_result
from trimcp.server import CachePolicy
from trimcp.sessions import serve_listen

from ._relay import SessionCaller

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.protocol import Implementation, JsonObject, Request, ServerCapabilities
    from trimcp.sessions import RequestContext, SessionHandle

    from ._parked import ParkedCalls
    from ._relay import Caller
    from ._subscriptions import Subscriptions

    #: Answers what both eras share, for a caller (``Gateway._serve``).
    Serve = Callable[[Request, RequestContext, Caller], Awaitable[JsonObject]]

__all__ = ["MRTR_METHODS", "ModernGateway"]

#: The requests a 2026-07-28 server may answer with an ``InputRequiredResult`` (MRTR).
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
#: The 2025-11-25 "resource not found" code, which 2026-07-28 answers with -32602.
_RESOURCE_NOT_FOUND = -32002


@final
class _Listeners:
    """The gateway's broadcasts, lent to one listen stream (``trimcp.sessions.ListenHost``)."""

    __slots__ = ("_listeners", "_sessions", "_subscriptions")

    def __init__(
        self,
        sessions: set[SessionHandle],
        listeners: set[SessionHandle],
        subscriptions: Subscriptions,
    ) -> None:
        self._sessions = sessions
        self._listeners = listeners
        self._subscriptions = subscriptions

    def join(self, listener: SessionHandle) -> None:
        self._listeners.add(listener)
        self._sessions.add(listener)

    async def subscribe(self, listener: SessionHandle, uri: str) -> bool:
        try:
            await self._subscriptions.handle("resources/subscribe", {"uri": uri}, listener)
        except (ResourceNotFound, InvalidParams):
            return False
        return True

    def leave(self, listener: SessionHandle) -> None:
        self._sessions.discard(listener)
        self._listeners.discard(listener)
        self._subscriptions.forget(listener)


@final
class ModernGateway:
    """Serves the gateway's 2026-07-28 requests (see the module docstring)."""

    __slots__ = ("_cache", "_info", "_listeners", "_parked", "_sessions", "_subscriptions")

    def __init__(  # noqa: PLR0913, PLR0917 - the gateway's parts it uses, each its own
        self,
        info: Implementation,
        sessions: set[SessionHandle],
        listeners: set[SessionHandle],
        subscriptions: Subscriptions,
        parked: ParkedCalls,
        cache: CachePolicy | None = None,
    ) -> None:
        self._info = info
        self._sessions = sessions
        self._listeners = listeners
        self._subscriptions = subscriptions
        self._parked = parked
        self._cache = cache or CachePolicy()

    async def handle(
        self,
        request: Request,
        context: RequestContext,
        capabilities: ServerCapabilities,
        serve: Serve,
    ) -> JsonObject:
        """Answer one modern request; ``serve`` answers what both eras share.

        Raises:
            JsonRpcError: refused, or failed at the backend.
        """
        method = request.method
        if method == "server/discover":
            result = discover_result(self._info, capabilities, None)
        elif method == "subscriptions/listen":
            listeners = _Listeners(self._sessions, self._listeners, self._subscriptions)
            return await serve_listen(
                context, request.params or {}, listeners, self._info, capabilities
            )
        elif method in HANDSHAKE_ONLY_METHODS:
            raise MethodNotFound(
                method,
                f"Method not found: {method} is not part of MCP 2026-07-28; use "
                "server/discover, subscriptions/listen or _meta logLevel instead",
            )
        else:
            result = dict(await self._answer(request, context, serve))
        result.setdefault("resultType", "complete")
        if result["resultType"] == "complete":
            self._cache.apply(method, result, authorized=context.identity is not None)
        return result

    async def _answer(self, request: Request, context: RequestContext, serve: Serve) -> JsonObject:
        """What both eras share, with the caller that a backend's asks go to."""
        try:
            if request.method not in MRTR_METHODS:
                return await serve(request, context, SessionCaller(context))
            params = dict(request.params or {})
            return await self._parked.serve(
                request.method, params, context, lambda call: serve(request, context, call)
            )
        except ResourceNotFound as exc:
            raise InvalidParams(f"Resource not found: {exc.uri}", {"uri": exc.uri}) from None
        except JsonRpcError as exc:
            if exc.code != _RESOURCE_NOT_FOUND:
                raise
            uri = request.params.get("uri") if request.params else None
            raise InvalidParams(f"Resource not found: {uri}", {"uri": uri}) from None
