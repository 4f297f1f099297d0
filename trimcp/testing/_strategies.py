"""Hypothesis strategies for MCP traffic: requests, notifications and malformed messages.

Built from what a server declares: ``mcp_requests`` takes the lists a server returned from
``tools/list``, ``resources/list``, ``resources/templates/list`` and ``prompts/list`` (``None``
for a feature the server did not declare) and yields ``(method, params)`` pairs a conforming
client could send. ``malformed_messages`` yields raw bytes a conforming client never sends;
a server must answer each with one error response, or stay silent where the spec says so,
and keep working.

Requests and notifications are *not* encoded: pair them with ``ProtocolStateMachine.request``
/ ``notify``, or encode with ``trimcp.protocol.encode_message``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, final

import hypothesis.strategies as st
import orjson

from trimcp.protocol import DEFAULT_MAX_MESSAGE_SIZE, ServerCapabilities
from trimcp.sessions import LOG_LEVELS

from ._schema_values import _MAX_SAFE_INT, json_values, tool_arguments

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from hypothesis.strategies import SearchStrategy
    from hypothesis.vendor.pretty import RepresentationPrinter

    from trimcp.protocol import JsonObject, JsonValue, RequestId

MethodCall = tuple[str, "JsonObject | None"]
"""A request or notification before encoding: its method and its params (``None``: absent)."""

_EMPTY_SCHEMA: Final[JsonObject] = {"type": "object"}
_SHORT_TEXT: Final = st.text(max_size=12)


def request_ids() -> SearchStrategy[RequestId]:
    """Generate JSON-RPC request ids: strings or safe integers, never ``null`` or a bool."""
    return st.one_of(
        st.integers(min_value=-_MAX_SAFE_INT, max_value=_MAX_SAFE_INT), st.text(max_size=16)
    )


def tool_calls(tools: Sequence[JsonObject]) -> SearchStrategy[JsonObject]:
    """Generate valid ``tools/call`` params for the given ``Tool`` objects.

    Each value names one of ``tools`` and carries ``arguments`` that satisfy its
    ``inputSchema`` (``tool_arguments``).

    Raises:
        ValueError: ``tools`` is empty.
    """
    if not tools:
        raise ValueError("tool_calls needs at least one tool")
    return st.one_of([_calls_of(tool) for tool in tools])


def _calls_of(tool: JsonObject) -> SearchStrategy[JsonObject]:
    schema = tool.get("inputSchema")
    arguments = tool_arguments(schema if isinstance(schema, dict) else _EMPTY_SCHEMA)
    name = tool.get("name")
    return arguments.map(lambda value: {"name": name, "arguments": value})


def mcp_requests(
    *,
    tools: Sequence[JsonObject] | None = None,
    resources: Sequence[JsonObject] | None = None,
    templates: Sequence[JsonObject] | None = None,
    prompts: Sequence[JsonObject] | None = None,
    capabilities: ServerCapabilities | None = None,
) -> SearchStrategy[MethodCall]:
    """Generate valid ``(method, params)`` requests for a server that declared these features.

    ``tools``, ``resources`` and ``prompts`` are the server's lists (``None``: the feature is
    not declared, so none of its methods are generated); ``templates`` the resource templates.
    ``capabilities`` adds ``logging/setLevel`` (valid levels) and ``completion/complete``
    when it declares ``logging`` / ``completions``. ``ping`` is always among them. List
    requests come with and without a ``cursor`` (a made-up one: expect -32602 or a page).
    """
    caps = capabilities or ServerCapabilities()
    choices: list[SearchStrategy[MethodCall]] = [st.just(("ping", None))]
    if tools is not None:
        choices.append(_listing("tools/list"))
        if tools:
            choices.append(tool_calls(tools).map(lambda params: ("tools/call", params)))
    if resources is not None:
        choices.extend(_resource_requests(resources))
    if prompts is not None:
        choices.extend(_prompt_requests(prompts))
    if caps.logging:
        level = st.sampled_from(LOG_LEVELS)
        choices.append(level.map(lambda name: ("logging/setLevel", {"level": name})))
    if caps.completions:
        choices.extend(_completions(prompts or (), templates or ()))
    return st.one_of(choices)


def _listing(method: str) -> SearchStrategy[MethodCall]:
    params = st.one_of(st.none(), st.just({}), st.builds(lambda c: {"cursor": c}, _SHORT_TEXT))
    return params.map(lambda value: (method, value))


def _resource_requests(resources: Sequence[JsonObject]) -> list[SearchStrategy[MethodCall]]:
    found = [_listing("resources/list"), _listing("resources/templates/list")]
    uris = [uri for uri in (item.get("uri") for item in resources) if isinstance(uri, str)]
    if uris:
        found.append(st.sampled_from(uris).map(_read_call))
    return found


def _read_call(uri: str) -> MethodCall:
    return "resources/read", {"uri": uri}


def _prompt_requests(prompts: Sequence[JsonObject]) -> list[SearchStrategy[MethodCall]]:
    found = [_listing("prompts/list")]
    gets = [_prompt_get(prompt) for prompt in prompts if isinstance(prompt.get("name"), str)]
    found.extend(gets)
    return found


def _prompt_arguments(prompt: JsonObject) -> list[tuple[str, bool]]:
    declared = prompt.get("arguments")
    items = declared if isinstance(declared, list) else []
    return [
        (str(item["name"]), item.get("required") is True)
        for item in items
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    ]


def _prompt_get(prompt: JsonObject) -> SearchStrategy[MethodCall]:
    arguments = _prompt_arguments(prompt)
    required = {name: _SHORT_TEXT for name, needed in arguments if needed}
    optional = {name: _SHORT_TEXT for name, needed in arguments if not needed}
    values: SearchStrategy[JsonObject] = st.fixed_dictionaries(required, optional=optional)
    name = prompt["name"]

    def call(args: JsonObject) -> MethodCall:
        return "prompts/get", {"name": name, "arguments": args}

    return values.map(call)


def _completions(
    prompts: Sequence[JsonObject], templates: Sequence[JsonObject]
) -> list[SearchStrategy[MethodCall]]:
    refs: list[tuple[JsonObject, str]] = []
    for prompt in prompts:
        for argument, _ in _prompt_arguments(prompt):
            refs.append(({"type": "ref/prompt", "name": prompt.get("name")}, argument))
    for template in templates:
        uri = template.get("uriTemplate")
        if isinstance(uri, str):
            refs.append(({"type": "ref/resource", "uri": uri}, "value"))
    if not refs:
        return []
    return [st.tuples(st.sampled_from(refs), _SHORT_TEXT).map(_completion)]


def _completion(choice: tuple[tuple[JsonObject, str], str]) -> MethodCall:
    (ref, argument), value = choice
    return "completion/complete", {"ref": ref, "argument": {"name": argument, "value": value}}


def mcp_notifications(*, roots_list_changed: bool = True) -> SearchStrategy[MethodCall]:
    """Generate notifications a client may send at any time after the handshake.

    ``notifications/initialized`` (a repeat changes nothing), ``notifications/cancelled`` and
    ``notifications/progress`` for ids and tokens no request uses (``unknown-...``, so they
    cancel nothing), and, if ``roots_list_changed``, ``notifications/roots/list_changed``
    (send it only if the client declared ``roots.listChanged``). None may be answered.
    """
    unknown = _SHORT_TEXT.map(lambda text: f"unknown-{text}")
    cancelled: SearchStrategy[JsonObject] = st.fixed_dictionaries(
        {"requestId": unknown}, optional={"reason": _SHORT_TEXT}
    )
    number = st.floats(min_value=0, max_value=1e6, allow_nan=False)
    progress: SearchStrategy[JsonObject] = st.fixed_dictionaries(
        {"progressToken": unknown, "progress": number},
        optional={"total": number, "message": _SHORT_TEXT},
    )
    choices: list[SearchStrategy[MethodCall]] = [
        st.just(("notifications/initialized", None)),
        cancelled.map(_notification("notifications/cancelled")),
        progress.map(_notification("notifications/progress")),
    ]
    if roots_list_changed:
        choices.append(st.just(("notifications/roots/list_changed", None)))
    return st.one_of(choices)


# --- malformed messages -----------------------------------------------------------------------


@final
class OversizedMessage(bytes):
    """A message over the size limit; Hypothesis prints its length, not its megabytes."""

    __slots__ = ()

    def _repr_pretty_(self, printer: RepresentationPrinter, cycle: bool) -> None:
        printer.text(f"OversizedMessage(<{len(self)} bytes>)")


def _dump(value: JsonValue) -> bytes:
    return orjson.dumps(value)


#: Valid JSON that is not a JSON-RPC 2.0 request; each gets one error response.
_NOT_JSON_RPC: Final[tuple[JsonValue, ...]] = (
    {"jsonrpc": "1.0", "id": 1, "method": "ping"},
    {"jsonrpc": 2.0, "id": 1, "method": "ping"},
    {"id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": 1},
    {"jsonrpc": "2.0", "id": None, "method": "ping"},
    {"jsonrpc": "2.0", "id": True, "method": "ping"},
    {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
    {"jsonrpc": "2.0", "id": [1], "method": "ping"},
    {"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"},
    {"jsonrpc": "2.0", "id": 1, "method": 42},
    {"jsonrpc": "2.0", "id": 1, "method": None},
    {"jsonrpc": "2.0", "id": 1, "method": ["ping"]},
    {"jsonrpc": "2.0", "method": 7},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1, 2]},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": "x"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": None},
    {"jsonrpc": "2.0", "id": 1, "method": "ping", "result": {}},
    {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}},
    {"jsonrpc": "2.0", "error": {"code": "bad", "message": "x"}},
    {"jsonrpc": "2.0", "error": {"code": 1}},
    {"jsonrpc": "2.0", "id": 1, "result": 5},
    [],
    "ping",
    42,
    None,
)

#: Text that is not JSON at all (-32700).
_NOT_JSON: Final[tuple[bytes, ...]] = (
    b"",
    b"{",
    b'{"jsonrpc":"2.0",',
    b"{'jsonrpc': '2.0'}",
    b'{"jsonrpc":"2.0","id":1,"method":"ping"} trailing',
    b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
    b"\xef\xbb\xbf{}",
    b'{"a":"\xff"}',
)


def _notification(method: str) -> Callable[[JsonObject], MethodCall]:
    def call(params: JsonObject) -> MethodCall:
        return method, params

    return call


def _batches() -> SearchStrategy[bytes]:
    ping: JsonObject = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    note: JsonObject = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    init: JsonObject = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {}}
    batches: list[JsonValue] = [[ping], [ping, note], [note], [init], [ping, 3]]
    return st.sampled_from(batches).map(_dump)


def _truncated() -> SearchStrategy[bytes]:
    whole = st.builds(
        lambda params: _dump({"jsonrpc": "2.0", "id": 1, "method": "x", "params": params}),
        st.dictionaries(_SHORT_TEXT, json_values(max_leaves=4), max_size=3),
    )
    return st.tuples(whole, st.integers(min_value=1)).map(lambda pair: pair[0][: -pair[1]])


def _oversized(limit: int) -> bytes:
    head = b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"'
    tail = b'"}}'
    return OversizedMessage(head + b"a" * max(0, limit + 1 - len(head) - len(tail)) + tail)


def malformed_messages(
    *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> SearchStrategy[bytes]:
    """Generate raw messages no conforming client sends.

    Invalid JSON (truncated, trailing text, ``NaN``, a byte-order mark, invalid UTF-8), JSON
    that is not JSON-RPC 2.0 (wrong or missing ``jsonrpc``, no ``method``, ids that are
    ``null``, booleans, floats or objects, non-string methods, ``params`` that are not an
    object, requests carrying a result, responses with broken error objects, bare scalars),
    batches (which 2025-11-25 removed), one message of ``max_message_size + 1`` bytes
    (an ``OversizedMessage``) and random bytes.

    A server answers each with exactly one error response (id-less unless the message was a
    request whose id could be read), or with nothing when the message was a well-formed
    response or notification (``[note]`` in a batch, a stray result), and keeps working.
    """
    return st.one_of(
        st.sampled_from(_NOT_JSON),
        st.sampled_from(_NOT_JSON_RPC).map(_dump),
        _truncated(),
        _batches(),
        st.just(_oversized(max_message_size)),
        st.binary(max_size=48),
    )
