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

Every forwarded request is registered in the ``InFlight`` table for its duration, so a
server-to-client request the backend makes meanwhile finds the downstream client to ask
(``_relay.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, final

from trimcp.client import SessionUpstream
from trimcp.errors import (
    InvalidParams,
    MethodNotFound,
    NotConnected,
    RequestTimeout,
    ResourceNotFound,
    TransportBroken,
    TransportClosed,
    UnknownServer,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.client import ConnectionManager, Progress, Upstream
    from trimcp.protocol import JsonObject
    from trimcp.sessions import RequestContext

    from ._catalog import Catalog
    from ._relay import InFlight
    from ._view import Route

__all__ = ["Router"]

logger = logging.getLogger(__name__)


def _error_result(text: str) -> JsonObject:
    return {"content": [{"type": "text", "text": text}], "isError": True}


@final
class Router:
    """Sends downstream requests to their backend (module docstring)."""

    def __init__(self, manager: ConnectionManager, catalog: Catalog, inflight: InFlight) -> None:
        self._manager = manager
        self._catalog = catalog
        self._inflight = inflight
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

    async def call_tool(self, params: JsonObject, context: RequestContext) -> JsonObject:
        """``tools/call``: a backend's failure is an ``isError`` result naming it."""
        route = await self.route("tools", params.get("name"))
        forwarded = {key: value for key, value in params.items() if key != "_meta"}
        forwarded["name"] = route.name
        meta = params.get("_meta")
        if isinstance(meta, Mapping):
            rest = {key: value for key, value in meta.items() if key != "progressToken"}
            if rest:
                forwarded["_meta"] = rest

        async def relay(progress: Progress) -> None:
            try:
                await context.report_progress(progress.progress, progress.total, progress.message)
            except Exception as exc:  # noqa: BLE001  (a backend's bad progress must not end the call)
                logger.debug("progress from %r not relayed: %s", route.backend, exc)

        on_progress = relay if context.progress_token is not None else None
        try:
            return await self.forward(route.backend, "tools/call", forwarded, context, on_progress)
        except NotConnected as exc:
            return _error_result(f"{route.name!r} cannot be called now: {exc}")
        except (TransportBroken, TransportClosed) as exc:
            return _error_result(
                f"MCP server {route.backend!r} failed while calling {route.name!r}: {exc}"
            )
        except RequestTimeout as exc:
            return _error_result(f"MCP server {route.backend!r} did not answer in time: {exc}")

    async def get_prompt(self, params: JsonObject, context: RequestContext) -> JsonObject:
        """``prompts/get``."""
        route = await self.route("prompts", params.get("name"))
        return await self.forward(
            route.backend, "prompts/get", {**params, "name": route.name}, context
        )

    async def read_resource(self, params: JsonObject, context: RequestContext) -> JsonObject:
        """``resources/read``: the URI as the backend listed it (``_view.py``)."""
        backend = self.resource_backend(params.get("uri"))
        return await self.forward(backend, "resources/read", params, context)

    async def complete(self, params: JsonObject, context: RequestContext) -> JsonObject:
        """``completion/complete`` of a prompt's or a resource template's argument."""
        ref = params.get("ref")
        if not isinstance(ref, Mapping):
            raise InvalidParams("ref missing", {"ref": ref})
        if ref.get("type") == "ref/prompt":
            route = await self.route("prompts", ref.get("name"))
            forwarded = {**params, "ref": {**ref, "name": route.name}}
            return await self.forward(route.backend, "completion/complete", forwarded, context)
        uri = ref.get("uri")
        template = self._catalog.view.templates.get(uri) if isinstance(uri, str) else None
        backend = template.backend if template is not None else self.resource_backend(uri)
        return await self.forward(backend, "completion/complete", params, context)

    async def forward(
        self,
        backend: str,
        method: str,
        params: JsonObject,
        context: RequestContext | None = None,
        on_progress: Callable[[Progress], object] | None = None,
    ) -> JsonObject:
        """Send one request to ``backend``; while it runs, ``context`` is its caller."""
        upstream = self.live.get(backend)
        if upstream is None:
            try:
                upstream = await self._manager.get_connection(backend)
            except UnknownServer as exc:
                raise NotConnected(str(exc), server=backend, state="stopped") from exc
        with self._inflight.calling(backend, context):
            if isinstance(upstream, SessionUpstream):
                return await upstream.session.request(method, params, on_progress=on_progress)  # type: ignore[arg-type]
            if method == "tools/call":
                arguments = params.get("arguments")
                return await upstream.call_tool(
                    str(params["name"]),
                    dict(arguments) if isinstance(arguments, Mapping) else {},
                    on_progress=on_progress,  # type: ignore[arg-type]
                )
        raise MethodNotFound(method)
