"""A backend's sampling, elicitation and roots requests, relayed to the caller that caused them.

A server may ask its client for ``sampling/createMessage``, ``elicitation/create`` and
``roots/list`` while it serves a request, and such a request belongs to that request: MCP
2025-11-25 sends it as a server-to-client request ("SHOULD relate to the originating client
request", Basic > Transports > Streamable HTTP > Sending Messages to the Server, point 6;
https://modelcontextprotocol.io/specification/2025-11-25/client), MCP 2026-07-28 as an
``InputRequiredResult`` of that very request (Basic > Patterns > Multi Round-Trip Requests,
https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr). The gateway
answers its backends with the ``ClientHandlers`` of ``client_handlers``, which pass each ask
on to a ``Caller``: the downstream side of the forwarded request.

* a **session caller** (a 2025-11-25 client): the ask is a request on its session, and its
  answer (or error) goes back to the backend;
* a **parked call** (a 2026-07-28 client, ``_parked.py``): the ask becomes an entry of the
  ``InputRequiredResult`` the caller gets, and its retry brings the answer;
* a 2026-07-28 request that may not be answered with input (``completion/complete``) is a
  session caller that declared nothing.

Which caller? Every forwarded request is registered in ``InFlight`` (``Router.forward``):

* a **2026-07-28 backend** asks inside the call itself (the client session answers its
  rounds in the calling task), so the caller is exact: ``InFlight.calling`` sets it in a
  context variable for the task that awaits the backend;
* a **2025-11-25 backend** asks with a request on the gateway's shared session to it, which
  names no originating request (the official SDKs keep that relation as transport metadata
  only). The callers with a request in flight on that backend are the candidates: exactly
  one, and it is asked (several calls from one session are one client, and the request
  carries its own content); none: refused with -32600, the gateway has no client to ask
  outside a call; more than one: refused with -32600 as ambiguous, rather than showing one
  client another's prompt.

The caller must have declared the capability (``sampling``; ``elicitation.form`` or
``elicitation.url`` for the request's mode; ``roots``): otherwise the ask fails with
``CapabilityLacking``, a -32601 (what a client without it answers a 2025-11-25 backend) that
names the client and what it lacks; a 2026-07-28 backend cannot be told of an error in a
round, so ``Router`` turns it into the -32021 the backend gives a client that declared
nothing. A caller without ``roots`` names no folders: the backend gets an empty list. The
gateway declares all three to every backend, and no ``roots.listChanged``: each
``roots/list`` is answered by the client whose call asked, so two answers may differ.

An ask goes downstream without ``_meta.progressToken`` (that token means nothing to the
downstream client) and with no timeout of its own: the backend decides how long to wait.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Final, Protocol, final

from trimcp.client import ClientHandlers, SamplingResult
from trimcp.errors import InvalidRequest, MethodNotFound, RemoteProtocolError
from trimcp.protocol import ClientCapabilities, ElicitResult, Fields, Root

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from trimcp.client import ElicitRequest, Progress, SamplingRequest
    from trimcp.protocol import JsonObject, JsonValue
    from trimcp.sessions import RequestContext

__all__ = [
    "Caller",
    "CapabilityLacking",
    "InFlight",
    "SessionCaller",
    "client_handlers",
    "downstream_params",
]


class Caller(Protocol):
    """The downstream side of one forwarded request (module docstring).

    Implementers guarantee that ``ask`` either returns the downstream client's answer or
    raises, and never asks a client for a capability ``capabilities`` lacks (the relay
    checks it first).
    """

    @property
    def key(self) -> object:
        """Who the client is, to tell callers apart: its session, or the parked call."""
        ...

    @property
    def modern(self) -> bool:
        """True for a 2026-07-28 caller (no session; request-scoped logs)."""
        ...

    @property
    def capabilities(self) -> ClientCapabilities:
        """What the client declared (for a 2026-07-28 caller: on its latest request)."""
        ...

    @property
    def version(self) -> str | None:
        """The session's negotiated version; None for a 2026-07-28 caller."""
        ...

    @property
    def log_level(self) -> str | None:
        """The level a 2026-07-28 caller asked for its request's logs (None: none, or a
        session, whose level the gateway knows already)."""
        ...

    @property
    def wants_progress(self) -> bool:
        """Whether progress of the backend request should be relayed."""
        ...

    def describe(self) -> str:
        """Name the client in messages."""
        ...

    async def ask(self, method: str, params: JsonObject | None) -> JsonObject:
        """Ask the client; return its answer (the wire result)."""
        ...

    async def report(self, progress: Progress) -> None:
        """Relay one progress notification of the backend request."""
        ...

    async def log(self, level: str, data: JsonValue, logger: str) -> None:
        """Relay one log line of the backend request (2026-07-28 callers)."""
        ...


#: The caller of the backend request this task awaits: (backend, caller), set by
#: ``InFlight.calling`` for the ``with`` block, seen by the handlers a 2026-07-28 backend's
#: rounds run in that same task.
_CALLING: Final[ContextVar[tuple[str, Caller] | None]] = ContextVar(
    "trimcp_gateway_caller", default=None
)


@final
class SessionCaller:
    """A downstream request with a session behind it (or a 2026-07-28 one that asks nothing)."""

    __slots__ = ("_context",)

    def __init__(self, context: RequestContext) -> None:
        self._context = context

    @property
    def key(self) -> object:
        return self._context.session

    @property
    def modern(self) -> bool:
        return self._context.session.request_meta is not None

    @property
    def capabilities(self) -> ClientCapabilities:
        # A 2026-07-28 request outside tools/call, prompts/get and resources/read cannot be
        # answered with input: its client can be asked nothing.
        session = self._context.session
        return ClientCapabilities() if self.modern else session.client_capabilities

    @property
    def version(self) -> str | None:
        return self._context.session.protocol_version

    @property
    def log_level(self) -> str | None:
        return self._context.session.log_level if self.modern else None

    @property
    def wants_progress(self) -> bool:
        return self._context.progress_token is not None

    def describe(self) -> str:
        session = self._context.session
        info = session.client_info
        return f"{info.name!r}" if info is not None else f"session {session.session_id}"

    async def ask(self, method: str, params: JsonObject | None) -> JsonObject:
        return await self._context.session.request(method, params, timeout=math.inf)

    async def report(self, progress: Progress) -> None:
        await self._context.report_progress(progress.progress, progress.total, progress.message)

    async def log(self, level: str, data: JsonValue, logger: str) -> None:
        await self._context.log(level, data, logger)


@final
class InFlight:
    """The callers each backend is serving now (module docstring)."""

    def __init__(self) -> None:
        self._calls: dict[str, list[Caller]] = {}

    @contextmanager
    def calling(self, backend: str, caller: Caller | None) -> Iterator[None]:
        """Register ``caller`` as in flight on ``backend`` for the ``with`` block."""
        if caller is None:
            yield
            return
        calls = self._calls.setdefault(backend, [])
        calls.append(caller)
        token = _CALLING.set((backend, caller))
        try:
            yield
        finally:
            _CALLING.reset(token)
            calls.remove(caller)
            if not calls:
                del self._calls[backend]

    def count(self, backend: str) -> int:
        """How many downstream requests ``backend`` is serving now."""
        return len(self._calls.get(backend, ()))

    def callers(self) -> list[Caller]:
        """Every caller in flight, on any backend."""
        return [caller for calls in self._calls.values() for caller in calls]

    def serving(self, backend: str) -> bool:
        """Whether some downstream call to ``backend`` is in flight."""
        return _current(backend) is not None or bool(self._calls.get(backend))

    def sole_caller(self, backend: str) -> Caller | None:
        """The one client with requests in flight on ``backend``; None: none, or several."""
        callers = {caller.key: caller for caller in self._calls.get(backend, ())}
        return next(iter(callers.values())) if len(callers) == 1 else None

    def caller_for(self, backend: str, method: str) -> Caller:
        """The caller to ask ``method`` for ``backend``, or the refusal (module docstring)."""
        current = _current(backend)
        if current is not None:
            return current
        calls = {caller.key for caller in self._calls.get(backend, ())}
        if not calls:
            raise InvalidRequest(
                f"{method} refused: the trimcp gateway relays a request of MCP server"
                f" {backend!r} to a client only while serving that client's call to it,"
                " and no call to it is in flight"
            )
        if len(calls) > 1:
            raise InvalidRequest(
                f"{method} refused: MCP server {backend!r} is serving calls of"
                f" {len(calls)} clients at once and the request does not say whose call"
                " it belongs to, so the trimcp gateway cannot tell which client to ask"
            )
        caller = self.sole_caller(backend)
        assert caller is not None
        return caller


def _current(backend: str) -> Caller | None:
    calling = _CALLING.get()
    return calling[1] if calling is not None and calling[0] == backend else None


def downstream_params(params: JsonObject | None) -> JsonObject:
    """``params`` of a backend's ask as the downstream client gets them (no progressToken)."""
    forwarded = dict(params or {})
    meta = forwarded.pop("_meta", None)
    if isinstance(meta, Mapping):
        rest = {key: value for key, value in meta.items() if key != "progressToken"}
        if rest:
            forwarded["_meta"] = rest
    return forwarded


@final
class CapabilityLacking(MethodNotFound):
    """The caller did not declare what a backend asked for (-32601; module docstring).

    ``required`` is the capability as ``requiredCapabilities`` of a -32021 names it.
    """

    def __init__(self, backend: str, method: str, caller: Caller, what: str) -> None:
        super().__init__(
            method,
            f"{method} of MCP server {backend!r} cannot be relayed: the client whose call caused"
            f" it ({caller.describe()}) did not declare {what}",
        )
        head, _, tail = what.partition(".")
        self.required: JsonObject = {head: {tail: {}} if tail else {}}


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
        caller = inflight.caller_for(backend, method)
        capabilities = caller.capabilities
        if not capabilities.sampling:
            raise CapabilityLacking(backend, method, caller, "sampling")
        if request.tools and not capabilities.sampling_tools:
            raise CapabilityLacking(backend, method, caller, "sampling.tools")
        params = downstream_params(request.params)
        return _sampling_result(await caller.ask(method, params))

    async def elicit(request: ElicitRequest) -> ElicitResult:
        method = "elicitation/create"
        caller = inflight.caller_for(backend, method)
        capabilities = caller.capabilities
        declared = (
            capabilities.elicitation_url if request.mode == "url" else capabilities.elicitation_form
        )
        if not declared:
            raise CapabilityLacking(backend, method, caller, f"elicitation.{request.mode}")
        params = downstream_params(request.params)
        version = caller.version
        if request.mode == "form" and version is not None and version < "2025-11-25":
            params.pop("mode", None)  # older clients know only the form shape
        return _elicit_result(await caller.ask(method, params))

    async def roots() -> Sequence[Root]:
        method = "roots/list"
        if not inflight.serving(backend):
            # Asked while serving the gateway itself (reading its catalog, say): no client
            # is behind the request, so no folder is named.
            return []
        caller = inflight.caller_for(backend, method)
        if not caller.capabilities.roots:
            # The gateway declared roots to its backends for all its clients; one that
            # declared none has named no folders: an empty list says exactly that.
            return []
        result = await caller.ask(method, None)
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
