"""Server-to-client requests and notifications: the application's handlers and callbacks.

``ClientHandlers`` bundles what a client offers: a sampling handler, an elicitation handler
(form and/or URL mode), roots, and callbacks for the server's notifications. Only what is
configured is declared at ``initialize`` (``capabilities_for``), so the protocol core refuses
the rest with the spec's codes before a handler could run: -32601 for ``sampling/createMessage``,
``elicitation/create`` and ``roots/list`` when undeclared (Client Features; https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#capability-negotiation),
-32602 for an elicitation mode or sampling tools the client did not declare.

``answer_request`` runs one server request through its handler and returns the wire result;
``apply_defaults`` fills in the requested schema's ``default`` values a form answer left out
(Elicitation > Form mode, 2025-11-25: clients SHOULD pre-fill defaults).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias, final

from trimcp.errors import InvalidParams, MethodNotFound
from trimcp.protocol import ClientCapabilities, ElicitResult, Fields, Root

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject, JsonValue, Request

    from ._results import LogMessage, Task


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SamplingRequest:
    """A server's ``sampling/createMessage``: the model call it asks the client to make.

    ``messages`` are wire ``SamplingMessage`` objects (``role`` and one content block or a
    list of them); ``params`` is the whole request as received (``modelPreferences``,
    ``metadata``, ``tools``, ``toolChoice``, ...).
    """

    messages: tuple[JsonObject, ...]
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()
    include_context: str | None = None
    model_preferences: JsonObject | None = None
    tools: tuple[JsonObject, ...] = ()
    params: JsonObject = field(default_factory=dict, repr=False)

    @classmethod
    def from_wire(cls, params: JsonObject) -> SamplingRequest:
        """Read the params; raises ``RemoteProtocolError`` when they are malformed."""
        fields = Fields(params, "sampling/createMessage params")
        max_tokens = fields.opt_int("maxTokens")
        return cls(
            messages=fields.objects("messages"),
            max_tokens=0 if max_tokens is None else max_tokens,
            system_prompt=fields.opt_string("systemPrompt"),
            temperature=fields.opt_number("temperature"),
            stop_sequences=fields.str_list("stopSequences"),
            include_context=fields.opt_string("includeContext"),
            model_preferences=fields.opt_obj("modelPreferences"),
            tools=fields.objects("tools"),
            params=params,
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SamplingResult:
    """What the sampling handler returns: the model's message and which model wrote it."""

    content: JsonObject | Sequence[JsonObject]
    model: str
    role: str = "assistant"
    stop_reason: str | None = None
    meta: JsonObject | None = None

    def to_wire(self) -> JsonObject:
        """Return the wire ``CreateMessageResult``."""
        content: JsonValue = self.content if isinstance(self.content, dict) else list(self.content)
        wire: JsonObject = {"role": self.role, "content": content, "model": self.model}
        if self.stop_reason is not None:
            wire["stopReason"] = self.stop_reason
        if self.meta is not None:
            wire["_meta"] = self.meta
        return wire


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ElicitRequest:
    """A server's ``elicitation/create``, in form mode or URL mode (2025-11-25).

    Form mode: ``requested_schema`` (a flat object schema). URL mode: ``url`` and
    ``elicitation_id``; the user must consent before the URL is opened, outside the client.
    """

    mode: Literal["form", "url"]
    message: str
    requested_schema: JsonObject | None = None
    url: str | None = None
    elicitation_id: str | None = None
    params: JsonObject = field(default_factory=dict, repr=False)

    @classmethod
    def from_wire(cls, params: JsonObject) -> ElicitRequest:
        """Read the params (an absent ``mode`` means form, Elicitation > Modes)."""
        fields = Fields(params, "elicitation/create params")
        mode = fields.opt_string("mode") or "form"
        if mode not in ("form", "url"):
            raise InvalidParams(f"Unknown elicitation mode {mode!r}")
        return cls(
            mode="url" if mode == "url" else "form",
            message=fields.opt_string("message") or "",
            requested_schema=fields.opt_obj("requestedSchema"),
            url=fields.opt_string("url"),
            elicitation_id=fields.opt_string("elicitationId"),
            params=params,
        )


SamplingHandler: TypeAlias = Callable[[SamplingRequest], Awaitable[SamplingResult]]
ElicitationHandler: TypeAlias = Callable[[ElicitRequest], Awaitable[ElicitResult]]
RootsProvider: TypeAlias = Sequence[Root] | Callable[[], Awaitable[Sequence[Root]]]
#: Notification callbacks may be plain functions or coroutine functions.
Callback: TypeAlias = Callable[..., Awaitable[None] | None]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ClientHandlers:
    """What the client offers the server, and what it wants to hear about.

    Attributes:
        sampling: answers ``sampling/createMessage``; declares ``sampling``.
        elicitation: answers ``elicitation/create``; declares ``elicitation`` with the
            ``elicitation_modes`` (default form only: declare ``"url"`` only if the
            handler can ask the user to open a URL).
        roots: a list, or a coroutine function returning one; declares ``roots`` with
            ``listChanged`` (call ``ClientSession.send_roots_list_changed`` on changes).
        roots_list_changed: declare ``roots.listChanged`` with ``roots`` (default True).
            False says the answer may differ from one ``roots/list`` to the next without a
            notification, so a server must ask again rather than keep an answer: a gateway
            relays each request to the client whose call caused it.
        on_log: ``fn(LogMessage)`` for ``notifications/message``.
        on_resource_updated: ``fn(uri)`` for ``notifications/resources/updated``.
        on_tools_changed, on_resources_changed, on_prompts_changed: ``fn()`` for the
            ``list_changed`` notifications (the session drops its cached tool schemas).
        on_task_status: ``fn(Task)`` for ``notifications/tasks/status``.
        on_elicitation_complete: ``fn(elicitation_id)`` for
            ``notifications/elicitation/complete``.

    Callbacks run one at a time, in arrival order, in the session's notification task; one
    that raises is logged and the session carries on.
    """

    sampling: SamplingHandler | None = None
    elicitation: ElicitationHandler | None = None
    elicitation_modes: tuple[Literal["form", "url"], ...] = ("form",)
    roots: RootsProvider | None = None
    roots_list_changed: bool = True
    on_log: Callable[[LogMessage], Awaitable[None] | None] | None = None
    on_resource_updated: Callable[[str], Awaitable[None] | None] | None = None
    on_tools_changed: Callable[[], Awaitable[None] | None] | None = None
    on_resources_changed: Callable[[], Awaitable[None] | None] | None = None
    on_prompts_changed: Callable[[], Awaitable[None] | None] | None = None
    on_task_status: Callable[[Task], Awaitable[None] | None] | None = None
    on_elicitation_complete: Callable[[str], Awaitable[None] | None] | None = None


def capabilities_for(handlers: ClientHandlers) -> ClientCapabilities:
    """Return the capabilities to declare: exactly those with a handler."""
    elicitation = handlers.elicitation is not None
    return ClientCapabilities(
        sampling=handlers.sampling is not None,
        elicitation_form=elicitation and "form" in handlers.elicitation_modes,
        elicitation_url=elicitation and "url" in handlers.elicitation_modes,
        roots=handlers.roots is not None,
        roots_list_changed=handlers.roots is not None and handlers.roots_list_changed,
    )


async def call_back(callback: Callable[..., Awaitable[None] | None], *args: object) -> None:
    """Call a notification callback, awaiting it if it is a coroutine function."""
    outcome = callback(*args)
    if inspect.isawaitable(outcome):
        await outcome


def apply_defaults(content: JsonObject | None, schema: JsonObject | None) -> JsonObject | None:
    """Return ``content`` with each property's ``default`` added where the answer omitted it.

    SEP-1034 (2025-11-25): a form field may carry ``default``; the client pre-fills it, so a
    user who accepts without touching the field answers with the default.
    """
    properties = (schema or {}).get("properties")
    if not isinstance(properties, dict):
        return content
    filled: JsonObject = dict(content or {})
    for name, prop in properties.items():
        if name not in filled and isinstance(prop, dict) and "default" in prop:
            filled[name] = prop["default"]
    return filled if (filled or content is not None) else None


async def _sample(handlers: ClientHandlers, params: JsonObject) -> JsonObject:
    assert handlers.sampling is not None  # the core refuses it otherwise (-32601)
    return (await handlers.sampling(SamplingRequest.from_wire(params))).to_wire()


async def _elicit(handlers: ClientHandlers, params: JsonObject) -> JsonObject:
    assert handlers.elicitation is not None
    request = ElicitRequest.from_wire(params)
    result = await handlers.elicitation(request)
    if request.mode == "url" or result.action != "accept":
        # content only for a form accept
        return ElicitResult(action=result.action, meta=result.meta).to_wire()
    answer = result.content
    if answer is not None and not isinstance(answer, dict):
        raise TypeError(f"an accepted form's content must be a dict, not {type(answer).__name__}")
    content = apply_defaults(answer, request.requested_schema)
    return ElicitResult(action="accept", content=content or {}, meta=result.meta).to_wire()


async def _list_roots(handlers: ClientHandlers) -> JsonObject:
    provider = handlers.roots
    roots = await provider() if callable(provider) else provider
    return {"roots": [root.to_wire() for root in roots or ()]}


async def answer_request(handlers: ClientHandlers, request: Request) -> JsonObject:
    """Run the handler for one server request and return its wire result.

    Raises:
        MethodNotFound: no client feature answers ``request.method``.
        JsonRpcError: the handler raised it on purpose (e.g. -1 for a refused sampling).
        Exception: anything else the handler raised (the caller answers -32603).
    """
    params = request.params or {}
    if request.method == "sampling/createMessage":
        return await _sample(handlers, params)
    if request.method == "elicitation/create":
        return await _elicit(handlers, params)
    if request.method == "roots/list":
        return await _list_roots(handlers)
    raise MethodNotFound(request.method)
