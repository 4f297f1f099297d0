"""Wire form <-> records for the payloads the lifecycle understands (camelCase lives here).

The second half of the codec (``_codec`` holds the JSON-RPC envelope and orjson). Parsing is
tolerant where the spec says receivers must be (unknown keys, capability values that are not
objects count as "not declared") and strict where the lifecycle cannot work without a member
(``initialize`` without ``protocolVersion``), which is -32602 Invalid params.
"""

from __future__ import annotations

from trimcp.errors import InvalidParams

from ._capabilities import ClientCapabilities, ServerCapabilities
from ._json import JsonObject, JsonValue, ProgressToken, is_number, is_request_id
from ._types import (
    CancelledParams,
    Implementation,
    InitializeParams,
    InitializeResult,
    ProgressParams,
)


def _obj(value: JsonValue) -> JsonObject | None:
    return value if isinstance(value, dict) else None


def _sub(parent: JsonObject | None, *path: str) -> JsonObject | None:
    """Follow ``path`` through nested objects; ``None`` as soon as one is missing."""
    node = parent
    for key in path:
        if node is None:
            return None
        node = _obj(node.get(key))
    return node


def _true(parent: JsonObject | None, key: str) -> bool:
    return parent is not None and parent.get(key) is True


_CLIENT_KEYS = frozenset({"roots", "sampling", "elicitation", "tasks", "experimental"})
_SERVER_KEYS = frozenset(
    {"prompts", "resources", "tools", "logging", "completions", "tasks", "experimental"}
)


def client_capabilities_from_wire(value: JsonValue) -> ClientCapabilities:
    """Read a ``ClientCapabilities`` object; anything that is not an object declares nothing."""
    wire = _obj(value) or {}
    roots, sampling = _sub(wire, "roots"), _sub(wire, "sampling")
    elicitation, tasks = _sub(wire, "elicitation"), _sub(wire, "tasks")
    url = _sub(elicitation, "url") is not None
    # 2025-11-25, Elicitation > Capabilities: a bare ``{}`` means form mode only.
    form = _sub(elicitation, "form") is not None or (elicitation is not None and not url)
    return ClientCapabilities(
        roots=roots is not None,
        roots_list_changed=_true(roots, "listChanged"),
        sampling=sampling is not None,
        sampling_context=_sub(sampling, "context") is not None,
        sampling_tools=_sub(sampling, "tools") is not None,
        elicitation_form=form,
        elicitation_url=url,
        tasks=tasks is not None,
        tasks_list=_sub(tasks, "list") is not None,
        tasks_cancel=_sub(tasks, "cancel") is not None,
        tasks_sampling_create_message=_sub(tasks, "requests", "sampling", "createMessage")
        is not None,
        tasks_elicitation_create=_sub(tasks, "requests", "elicitation", "create") is not None,
        experimental=_sub(wire, "experimental"),
        extra={key: item for key, item in wire.items() if key not in _CLIENT_KEYS},
    )


def server_capabilities_from_wire(value: JsonValue) -> ServerCapabilities:
    """Read a ``ServerCapabilities`` object; anything that is not an object declares nothing."""
    wire = _obj(value) or {}
    prompts, resources = _sub(wire, "prompts"), _sub(wire, "resources")
    tools, tasks = _sub(wire, "tools"), _sub(wire, "tasks")
    return ServerCapabilities(
        prompts=prompts is not None,
        prompts_list_changed=_true(prompts, "listChanged"),
        resources=resources is not None,
        resources_subscribe=_true(resources, "subscribe"),
        resources_list_changed=_true(resources, "listChanged"),
        tools=tools is not None,
        tools_list_changed=_true(tools, "listChanged"),
        logging=_sub(wire, "logging") is not None,
        completions=_sub(wire, "completions") is not None,
        tasks=tasks is not None,
        tasks_list=_sub(tasks, "list") is not None,
        tasks_cancel=_sub(tasks, "cancel") is not None,
        tasks_tools_call=_sub(tasks, "requests", "tools", "call") is not None,
        experimental=_sub(wire, "experimental"),
        extra={key: item for key, item in wire.items() if key not in _SERVER_KEYS},
    )


def _flags(pairs: dict[str, bool]) -> JsonObject:
    return {key: {} for key, on in pairs.items() if on}


def client_capabilities_to_wire(caps: ClientCapabilities) -> JsonObject:
    """Write a ``ClientCapabilities`` object (sub-flags switch their parent on)."""
    wire: JsonObject = dict(caps.extra)
    if caps.roots or caps.roots_list_changed:
        wire["roots"] = {"listChanged": True} if caps.roots_list_changed else {}
    if caps.sampling or caps.sampling_context or caps.sampling_tools:
        wire["sampling"] = _flags({"context": caps.sampling_context, "tools": caps.sampling_tools})
    if caps.elicitation:
        wire["elicitation"] = _flags({"form": caps.elicitation_form, "url": caps.elicitation_url})
    requests: JsonObject = {}
    if caps.tasks_sampling_create_message:
        requests["sampling"] = {"createMessage": {}}
    if caps.tasks_elicitation_create:
        requests["elicitation"] = {"create": {}}
    if caps.tasks or caps.tasks_list or caps.tasks_cancel or requests:
        tasks = _flags({"list": caps.tasks_list, "cancel": caps.tasks_cancel})
        if requests:
            tasks["requests"] = requests
        wire["tasks"] = tasks
    if caps.experimental is not None:
        wire["experimental"] = caps.experimental
    return wire


def _list_changed(on: bool, list_changed: bool) -> JsonObject | None:
    if list_changed:
        return {"listChanged": True}
    return {} if on else None


def server_capabilities_to_wire(caps: ServerCapabilities) -> JsonObject:
    """Write a ``ServerCapabilities`` object (sub-flags switch their parent on)."""
    wire: JsonObject = dict(caps.extra)
    for key, value in (
        ("prompts", _list_changed(caps.prompts, caps.prompts_list_changed)),
        ("tools", _list_changed(caps.tools, caps.tools_list_changed)),
    ):
        if value is not None:
            wire[key] = value
    if caps.resources or caps.resources_subscribe or caps.resources_list_changed:
        resources: JsonObject = {}
        if caps.resources_subscribe:
            resources["subscribe"] = True
        if caps.resources_list_changed:
            resources["listChanged"] = True
        wire["resources"] = resources
    wire.update(_flags({"logging": caps.logging, "completions": caps.completions}))
    if caps.tasks or caps.tasks_list or caps.tasks_cancel or caps.tasks_tools_call:
        tasks = _flags({"list": caps.tasks_list, "cancel": caps.tasks_cancel})
        if caps.tasks_tools_call:
            tasks["requests"] = {"tools": {"call": {}}}
        wire["tasks"] = tasks
    if caps.experimental is not None:
        wire["experimental"] = caps.experimental
    return wire


_IMPLEMENTATION_KEYS = frozenset({"name", "version", "title", "description", "websiteUrl", "icons"})


def _optional_str(wire: JsonObject, key: str) -> str | None:
    value = wire.get(key)
    return value if isinstance(value, str) else None


def implementation_from_wire(value: JsonValue, member: str) -> Implementation:
    """Read ``clientInfo`` / ``serverInfo`` (``member`` names it in the error).

    Raises:
        InvalidParams: not an object, or ``name`` / ``version`` is not a string.
    """
    wire = _obj(value)
    if wire is None or not isinstance(wire.get("name"), str):
        raise InvalidParams(f'"{member}" must be an object with a string "name"')
    name, version = wire["name"], wire.get("version")
    if not isinstance(name, str) or not isinstance(version, str):
        raise InvalidParams(f'"{member}" must have string "name" and "version" members')
    icons = wire.get("icons")
    return Implementation(
        name=name,
        version=version,
        title=_optional_str(wire, "title"),
        description=_optional_str(wire, "description"),
        website_url=_optional_str(wire, "websiteUrl"),
        icons=tuple(icon for icon in icons if isinstance(icon, dict))
        if isinstance(icons, list)
        else (),
        extra={key: item for key, item in wire.items() if key not in _IMPLEMENTATION_KEYS},
    )


def implementation_to_wire(info: Implementation) -> JsonObject:
    """Write ``clientInfo`` / ``serverInfo``; unset optional members are left out."""
    wire: JsonObject = dict(info.extra)
    wire["name"] = info.name
    wire["version"] = info.version
    for key, value in (
        ("title", info.title),
        ("description", info.description),
        ("websiteUrl", info.website_url),
    ):
        if value is not None:
            wire[key] = value
    if info.icons:
        wire["icons"] = list(info.icons)
    return wire


def initialize_params_from_wire(params: JsonObject | None) -> InitializeParams:
    """Read the params of ``initialize``.

    Raises:
        InvalidParams: ``protocolVersion`` is missing or not a string, ``capabilities`` is not
            an object, or ``clientInfo`` is unusable.
    """
    wire = params or {}
    version = wire.get("protocolVersion")
    if not isinstance(version, str):
        raise InvalidParams('"protocolVersion" must be a string')
    capabilities = wire.get("capabilities", {})
    if not isinstance(capabilities, dict):
        raise InvalidParams('"capabilities" must be an object')
    return InitializeParams(
        protocol_version=version,
        capabilities=client_capabilities_from_wire(capabilities),
        client_info=implementation_from_wire(wire.get("clientInfo"), "clientInfo"),
    )


def initialize_params_to_wire(params: InitializeParams) -> JsonObject:
    """Write the params of ``initialize``."""
    return {
        "protocolVersion": params.protocol_version,
        "capabilities": client_capabilities_to_wire(params.capabilities),
        "clientInfo": implementation_to_wire(params.client_info),
    }


def initialize_result_from_wire(result: JsonObject) -> InitializeResult:
    """Read the result of ``initialize``.

    Raises:
        InvalidParams: a required member is missing or has the wrong type.
    """
    version = result.get("protocolVersion")
    if not isinstance(version, str):
        raise InvalidParams('"protocolVersion" must be a string')
    return InitializeResult(
        protocol_version=version,
        capabilities=server_capabilities_from_wire(result.get("capabilities")),
        server_info=implementation_from_wire(result.get("serverInfo"), "serverInfo"),
        instructions=_optional_str(result, "instructions"),
    )


def initialize_result_to_wire(result: InitializeResult) -> JsonObject:
    """Write the result of ``initialize``."""
    wire: JsonObject = {
        "protocolVersion": result.protocol_version,
        "capabilities": server_capabilities_to_wire(result.capabilities),
        "serverInfo": implementation_to_wire(result.server_info),
    }
    if result.instructions is not None:
        wire["instructions"] = result.instructions
    return wire


def cancelled_params_from_wire(params: JsonObject | None) -> CancelledParams | None:
    """Read ``notifications/cancelled`` params; ``None`` if malformed (ignored silently).

    MCP 2025-11-25, Utilities > Cancellation: malformed cancellations SHOULD be ignored.
    """
    wire = params or {}
    request_id = wire.get("requestId")
    if request_id is not None and not is_request_id(request_id):
        return None
    return CancelledParams(request_id=request_id, reason=_optional_str(wire, "reason"))


def cancelled_params_to_wire(params: CancelledParams) -> JsonObject:
    """Write ``notifications/cancelled`` params."""
    wire: JsonObject = {}
    if params.request_id is not None:
        wire["requestId"] = params.request_id
    if params.reason is not None:
        wire["reason"] = params.reason
    return wire


def progress_params_from_wire(params: JsonObject | None) -> ProgressParams | None:
    """Read ``notifications/progress`` params; ``None`` if malformed (then it is dropped)."""
    wire = params or {}
    token, progress, total = wire.get("progressToken"), wire.get("progress"), wire.get("total")
    if not is_request_id(token) or not is_number(progress):
        return None
    if total is not None and not is_number(total):
        return None
    return ProgressParams(
        progress_token=token,
        progress=progress,
        total=total,
        message=_optional_str(wire, "message"),
    )


def progress_params_to_wire(params: ProgressParams) -> JsonObject:
    """Write ``notifications/progress`` params."""
    wire: JsonObject = {"progressToken": params.progress_token, "progress": params.progress}
    if params.total is not None:
        wire["total"] = params.total
    if params.message is not None:
        wire["message"] = params.message
    return wire


def progress_token_of(params: JsonObject | None) -> ProgressToken | None:
    """Return ``params._meta.progressToken`` if the request asked for progress."""
    # Runs for every request: plain lookups, no helpers.
    meta = params.get("_meta") if params is not None else None
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if token is not None and is_request_id(token) else None


def client_flags_for_request(method: str, params: JsonObject | None) -> tuple[str, ...]:
    """Return the extra client capability flags a server request's params call for.

    MCP 2025-11-25: ``tools``/``toolChoice`` in sampling need ``sampling.tools``;
    ``includeContext`` other than ``"none"`` SHOULD NOT be sent without ``sampling.context``;
    URL-mode elicitation needs ``elicitation.url`` and form mode (the default) needs
    ``elicitation.form``; a ``task`` member needs the matching ``tasks.requests`` entry.
    """
    wire = params or {}
    flags: list[str] = []
    if method == "sampling/createMessage":
        if "tools" in wire or "toolChoice" in wire:
            flags.append("sampling_tools")
        if wire.get("includeContext", "none") != "none":
            flags.append("sampling_context")
        if "task" in wire:
            flags.append("tasks_sampling_create_message")
    elif method == "elicitation/create":
        flags.append("elicitation_url" if wire.get("mode") == "url" else "elicitation_form")
        if "task" in wire:
            flags.append("tasks_elicitation_create")
    return tuple(flags)


_CAPABILITY_PATHS = {
    "roots_list_changed": "roots.listChanged",
    "prompts_list_changed": "prompts.listChanged",
    "resources_list_changed": "resources.listChanged",
    "tools_list_changed": "tools.listChanged",
    "tasks_sampling_create_message": "tasks.requests.sampling.createMessage",
    "tasks_elicitation_create": "tasks.requests.elicitation.create",
    "tasks_tools_call": "tasks.requests.tools.call",
}


def capability_path(flag: str) -> str:
    """Spell a capability flag the way the wire does, for error messages."""
    return _CAPABILITY_PATHS.get(flag, flag.replace("_", "."))
