"""Server-to-client requests of a backend, relayed to the downstream client that caused them.

MCP 2025-11-25 lets a server ask its client for ``sampling/createMessage``,
``elicitation/create`` and ``roots/list`` (Client Features,
https://modelcontextprotocol.io/specification/2025-11-25/client), and says such a request
made while serving a client request belongs to it: over Streamable HTTP it "SHOULD relate to
the originating client request" and goes on that request's SSE stream (Basic > Transports >
Streamable HTTP > Sending Messages to the Server, point 6). Nothing on the wire names the
originating request, though: the official SDKs (Python ``related_request_id``, TypeScript
``relatedRequestId``) keep the relation as *transport metadata* that only picks the SSE
stream; over stdio or WebSocket the request is just a request on the shared session.

The gateway's client session to a backend is shared by every downstream call routed to it,
so it associates by what is in flight (``InFlight``, fed by ``Router.forward``):

* the downstream **sessions** with a request in flight on that backend are the candidates;
* exactly one: the request goes to that session's client, and its answer (or error) goes
  back to the backend. With one call in flight this is exact; with several calls from the
  same client it is still the right client (which of its calls caused it cannot matter to
  the client: the request carries its own content);
* none: refused with -32600 (Invalid Request) naming the backend and the method: the
  gateway has no client to ask outside a call (a backend that asks for roots right after
  ``initialized`` gets this answer, and should ask again during a call);
* more than one: refused with -32600 saying it is ambiguous, rather than asking a client
  whose call did not cause it (a wrong client would see another user's prompt). This is
  the rule's limit: concurrent calls from several clients to one backend that samples.
  Lifting it needs the backend's transport relation (an HTTP backend's SSE stream per
  POST), which the client transports do not surface yet.

The downstream client must have declared the capability (``sampling``; ``elicitation.form``
or ``elicitation.url`` for the request's mode; ``roots``): otherwise the backend gets -32601
(what that client would have answered) with a message saying which client lacks what. The
gateway declares all three to every backend (``client_handlers``), since which client will
be asked is known only per request. The gateway never sends ``notifications/roots/
list_changed`` upstream: a backend's roots are those of the client of the call asking.

The request goes downstream without ``_meta.progressToken`` (that token means nothing to the
downstream client) and with no timeout of its own: the backend decides how long to wait, and
its ``notifications/cancelled`` cancels the relayed request (the client session cancels the
handler, which cancels the downstream request, which tells the downstream client).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, final

from trimcp.client import ClientHandlers, SamplingResult
from trimcp.errors import InvalidRequest, MethodNotFound, RemoteProtocolError
from trimcp.protocol import ElicitResult, Fields, Root

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from trimcp.client import ElicitRequest, SamplingRequest
    from trimcp.protocol import JsonObject
    from trimcp.sessions import RequestContext, SessionHandle

__all__ = ["InFlight", "client_handlers"]


@final
class InFlight:
    """The downstream requests being served by each backend (module docstring)."""

    def __init__(self) -> None:
        self._calls: dict[str, list[RequestContext]] = {}

    @contextmanager
    def calling(self, backend: str, context: RequestContext | None) -> Iterator[None]:
        """Register ``context`` as in flight on ``backend`` for the ``with`` block."""
        if context is None:
            yield
            return
        calls = self._calls.setdefault(backend, [])
        calls.append(context)
        try:
            yield
        finally:
            calls.remove(context)
            if not calls:
                del self._calls[backend]

    def count(self, backend: str) -> int:
        """How many downstream requests ``backend`` is serving now."""
        return len(self._calls.get(backend, ()))

    def serving(self, backend: str) -> bool:
        """Whether some downstream call to ``backend`` is in flight."""
        return bool(self._calls.get(backend))

    def client_for(self, backend: str, method: str) -> SessionHandle:
        """The downstream session to ask ``method`` for ``backend``, or the refusal."""
        sessions = {context.session for context in self._calls.get(backend, ())}
        if not sessions:
            raise InvalidRequest(
                f"{method} refused: the trimcp gateway relays a request of MCP server"
                f" {backend!r} to a client only while serving that client's call to it,"
                " and no call to it is in flight"
            )
        if len(sessions) > 1:
            raise InvalidRequest(
                f"{method} refused: MCP server {backend!r} is serving calls of"
                f" {len(sessions)} clients at once and the request does not say whose call"
                " it belongs to, so the trimcp gateway cannot tell which client to ask"
            )
        (session,) = sessions
        return session


def _downstream_params(params: JsonObject) -> JsonObject:
    forwarded = dict(params)
    meta = forwarded.pop("_meta", None)
    if isinstance(meta, Mapping):
        rest = {key: value for key, value in meta.items() if key != "progressToken"}
        if rest:
            forwarded["_meta"] = rest
    return forwarded


def _lacking(backend: str, method: str, session: SessionHandle, what: str) -> MethodNotFound:
    info = session.client_info
    client = f"{info.name!r}" if info is not None else f"session {session.session_id}"
    return MethodNotFound(
        method,
        f"{method} of MCP server {backend!r} cannot be relayed: the client whose call caused"
        f" it ({client}) did not declare {what}",
    )


def _sampling_result(result: JsonObject) -> SamplingResult:
    fields = Fields(result, "sampling/createMessage result")
    content = result.get("content")
    if not isinstance(content, dict | list):
        raise RemoteProtocolError("sampling/createMessage result: content missing")
    return SamplingResult(
        content=content,  # type: ignore[arg-type]
        model=fields.opt_string("model") or "",
        role=fields.opt_string("role") or "assistant",
        stop_reason=fields.opt_string("stopReason"),
        meta=fields.opt_obj("_meta"),
    )


def _elicit_result(result: JsonObject) -> ElicitResult:
    action = result.get("action")
    if action not in ("accept", "decline", "cancel"):
        raise RemoteProtocolError(f"elicitation/create result: bad action {action!r}")
    content = result.get("content")
    meta = result.get("_meta")
    return ElicitResult(
        action=action,  # type: ignore[arg-type]
        content=dict(content) if isinstance(content, Mapping) else None,
        meta=dict(meta) if isinstance(meta, Mapping) else None,
    )


def client_handlers(backend: str, inflight: InFlight) -> ClientHandlers:
    """Sampling, elicitation (both modes) and roots for ``backend``, each relayed."""

    async def sample(request: SamplingRequest) -> SamplingResult:
        method = "sampling/createMessage"
        session = inflight.client_for(backend, method)
        capabilities = session.client_capabilities
        if not capabilities.sampling:
            raise _lacking(backend, method, session, "sampling")
        if request.tools and not capabilities.sampling_tools:
            raise _lacking(backend, method, session, "sampling.tools")
        params = _downstream_params(request.params)
        return _sampling_result(await session.request(method, params, timeout=math.inf))

    async def elicit(request: ElicitRequest) -> ElicitResult:
        method = "elicitation/create"
        session = inflight.client_for(backend, method)
        capabilities = session.client_capabilities
        declared = (
            capabilities.elicitation_url if request.mode == "url" else capabilities.elicitation_form
        )
        if not declared:
            raise _lacking(backend, method, session, f"elicitation.{request.mode}")
        params = _downstream_params(request.params)
        version = session.protocol_version
        if request.mode == "form" and version is not None and version < "2025-11-25":
            params.pop("mode", None)  # older clients know only the form shape
        return _elicit_result(await session.request(method, params, timeout=math.inf))

    async def roots() -> Sequence[Root]:
        method = "roots/list"
        if not inflight.serving(backend):
            # Asked while serving the gateway itself (reading its catalog, say): no client
            # is behind the request, so no folder is named.
            return []
        session = inflight.client_for(backend, method)
        if not session.client_capabilities.roots:
            # The gateway declared roots to its backends for all its clients; one that
            # declared none has named no folders: an empty list says exactly that.
            return []
        result = await session.request(method, None, timeout=math.inf)
        listed = result.get("roots")
        return [
            Root.from_wire(Fields(item, f"roots/list: roots[{index}]"))
            for index, item in enumerate(listed if isinstance(listed, list) else [])
        ]

    # No roots.listChanged: each roots/list is answered by the client whose call caused it,
    # so two answers may differ with no notification between them; a backend must ask again.
    return ClientHandlers(
        sampling=sample,
        elicitation=elicit,
        elicitation_modes=("form", "url"),
        roots=roots,
        roots_list_changed=False,
    )
