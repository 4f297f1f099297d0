"""Routing: a downstream request goes to the backend that offers what it names.

MCP 2025-11-25, https://modelcontextprotocol.io/specification/2025-11-25/server:
``tools/call``, ``prompts/get``, ``resources/read`` and ``completion/complete`` go to the
backend's live ``ClientSession`` with the backend's own name put back (``_view.Route``).
Progress from the backend is relayed to the downstream request (Basic > Utilities >
Progress); cancelling the downstream request cancels the task awaiting the backend, and the
client session then sends ``notifications/cancelled`` upstream (Utilities > Cancellation).

A backend that dies with a call in flight: the call's ``ConnectionLost`` (exit status and
stderr tail of a process, in its message) becomes a ``CallToolResult`` with ``isError``
naming the backend (Server > Tools > Error Handling: tool execution errors are results, so
the model sees them); never a hang nor an empty success. A call to a backend not connected
now gets the same kind of result with the connection's state and last error.

Every forwarded request is registered in the ``InFlight`` table for its duration, with its
``Caller`` (the downstream side: a session, or a 2026-07-28 call parked between rounds), so a
backend that asks for input meanwhile finds the client to ask (``_relay.py``). What is sent
is said in the backend's era (``_backend.py``); what belongs to the downstream hop stays
out of it: ``progressToken`` (the gateway sets its own when progress is relayed), the
reserved ``io.modelcontextprotocol/*`` members of ``_meta`` (version, capabilities, log
level of the downstream request), and a retry's ``inputResponses`` and ``requestState``.
A 2026-07-28 backend that needs a capability the caller lacks gets no error in a round, so
the call ends as it would for a client that declared nothing: -32021 naming it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final, final

from trimcp.client import SessionUpstream
from trimcp.errors import (
    InvalidParams,
    MethodNotFound,
    MissingClientCapability,
    NotConnected,
    RequestTimeout,
    ResourceNotFound,
    ToolOutputInvalid,
    TransportBroken,
    TransportClosed,
    UnknownServer,
)
from trimcp.protocol import Era

from ._backend import send
from ._relay import CapabilityLacking

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.client import ConnectionManager, Progress, Upstream
    from trimcp.protocol import JsonObject

    from ._catalog import Catalog
    from ._logs import LogRelay
    from ._relay import Caller, InFlight
    from ._view import Route

__all__ = ["Router", "forwarded_params"]

logger = logging.getLogger(__name__)

#: Members of a downstream request's params that belong to its own hop (module docstring).
_OWN_PARAMS: Final = frozenset({"_meta", "inputResponses", "requestState"})
_RESERVED_META: Final = "io.modelcontextprotocol/"


def _error_result(text: str) -> JsonObject:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def forwarded_params(params: JsonObject) -> JsonObject:
    """``params`` as the backend gets them: without what belongs to the downstream hop."""
    forwarded = {key: value for key, value in params.items() if key not in _OWN_PARAMS}
    meta = params.get("_meta")
    if isinstance(meta, Mapping):
        rest = {
            key: value
            for key, value in meta.items()
            if key != "progressToken" and not key.startswith(_RESERVED_META)
        }
        if rest:
            forwarded["_meta"] = rest
    return forwarded


@final
class Router:
    """Sends downstream requests to their backend (module docstring)."""

    def __init__(
        self, manager: ConnectionManager, catalog: Catalog, inflight: InFlight, logs: LogRelay
    ) -> None:
        self._manager = manager
        self._catalog = catalog
        self._inflight = inflight
        self._logs = logs
        # The open connection of each backend, kept by the gateway's connector for as long
        # as the connection lasts: a call reads it here instead of asking the backend's
        # connection actor (a mailbox round trip per call). The actor stays the one to ask
        # when it is missing, for the error that says why.
        self.live: dict[str, Upstream] = {}

    async def route(self, kind: str, name: object) -> Route:
        """The route of the tool or prompt (``kind``) shown as ``name``."""
        if not isinstance(name, str):
            raise InvalidParams(f"{kind[:-1]} name missing", {"name": name})
        view = self._catalog.view
        route = (view.tools if kind == "tools" else view.prompts).get(name)
        if route is None:
            # The view may lag a connection that just came up: read it afresh once.
            await self._catalog.rebuild()
            view = self._catalog.view
            route = (view.tools if kind == "tools" else view.prompts).get(name)
        if route is None:
            raise InvalidParams(f"unknown {kind[:-1]}: {name!r}", {"name": name})
        return route

    def resource_backend(self, uri: object) -> str:
        """The backend a read or subscription of ``uri`` goes to (``View.resource_backend``)."""
        if not isinstance(uri, str):
            raise InvalidParams("uri missing", {"uri": uri})
        backend = self._catalog.view.resource_backend(uri)
        if backend is None:
            raise ResourceNotFound(uri)
        return backend

    async def call_tool(self, params: JsonObject, caller: Caller) -> JsonObject:
        """``tools/call``: a backend's failure is an ``isError`` result naming it."""
        route = await self.route("tools", params.get("name"))
        forwarded = forwarded_params(params)
        forwarded["name"] = route.name

        async def relay(progress: Progress) -> None:
            try:
                await caller.report(progress)
            except Exception as exc:  # noqa: BLE001  (a backend's bad progress must not end the call)
                logger.debug("progress from %r not relayed: %s", route.backend, exc)

        on_progress = relay if caller.wants_progress else None
        backend = route.backend
        try:
            return await self.forward(backend, "tools/call", forwarded, caller, on_progress)
        except NotConnected as exc:
            return _error_result(f"{route.name!r} cannot be called now: {exc}")
        except (TransportBroken, TransportClosed) as exc:
            return _error_result(
                f"MCP server {backend!r} failed while calling {route.name!r}: {exc}"
            )
        except RequestTimeout as exc:
            return _error_result(f"MCP server {backend!r} did not answer in time: {exc}")
        except ToolOutputInvalid as exc:
            return _error_result(f"MCP server {backend!r} answered {route.name!r} badly: {exc}")

    async def get_prompt(self, params: JsonObject, caller: Caller) -> JsonObject:
        """``prompts/get``."""
        route = await self.route("prompts", params.get("name"))
        forwarded = {**forwarded_params(params), "name": route.name}
        return await self.forward(route.backend, "prompts/get", forwarded, caller)

    async def read_resource(self, params: JsonObject, caller: Caller) -> JsonObject:
        """``resources/read``: the URI as the backend listed it (``_view.py``)."""
        backend = self.resource_backend(params.get("uri"))
        return await self.forward(backend, "resources/read", forwarded_params(params), caller)

    async def complete(self, params: JsonObject, caller: Caller) -> JsonObject:
        """``completion/complete`` of a prompt's or a resource template's argument."""
        ref = params.get("ref")
        if not isinstance(ref, Mapping):
            raise InvalidParams("ref missing", {"ref": ref})
        forwarded = forwarded_params(params)
        if ref.get("type") == "ref/prompt":
            route = await self.route("prompts", ref.get("name"))
            forwarded["ref"] = {**ref, "name": route.name}
            return await self.forward(route.backend, "completion/complete", forwarded, caller)
        uri = ref.get("uri")
        template = self._catalog.view.templates.get(uri) if isinstance(uri, str) else None
        backend = template.backend if template is not None else self.resource_backend(uri)
        return await self.forward(backend, "completion/complete", forwarded, caller)

    async def forward(
        self,
        backend: str,
        method: str,
        params: JsonObject,
        caller: Caller | None = None,
        on_progress: Callable[[Progress], Awaitable[None]] | None = None,
    ) -> JsonObject:
        """Send one request to ``backend`` in its era; while it runs, ``caller`` is asked
        what the backend asks (``_relay.py``).

        Raises:
            MissingClientCapability: a 2026-07-28 backend asked ``caller`` for a capability
                it did not declare (the call cannot go on without it).
        """
        upstream = self.live.get(backend)
        if upstream is None:
            try:
                upstream = await self._manager.get_connection(backend)
            except UnknownServer as exc:
                raise NotConnected(str(exc), server=backend, state="stopped") from exc
        with self._inflight.calling(backend, caller):
            if isinstance(upstream, SessionUpstream):
                session = upstream.session
                if session.era is Era.MODERN:  # its requests carry the level (``_logs.py``)
                    await session.set_logging_level(self._logs.wanted(caller))
                try:
                    return await send(session, method, params, on_progress)
                except CapabilityLacking as exc:
                    raise MissingClientCapability(dict(exc.required), exc.message) from None
            if method == "tools/call":
                arguments = params.get("arguments")
                return await upstream.call_tool(
                    str(params["name"]),
                    dict(arguments) if isinstance(arguments, Mapping) else {},
                    on_progress=on_progress,
                )
        raise MethodNotFound(method)
