"""Requests a tool may send the client: params built and results read, without I/O.

``Context.sample``, ``Context.elicit``, ``Context.elicit_url`` and ``Context.list_roots``
(``_context``) send what these functions build and hand back what they parse. Wire shapes:
MCP 2025-11-25, Client Features > Sampling, Elicitation, Roots.
"""

from __future__ import annotations

import contextlib
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict

from trimcp.errors import (
    ArgumentError,
    ClientCapabilityMissing,
    ElicitationError,
    RemoteProtocolError,
)
from trimcp.protocol import ElicitAction, ElicitResult, Fields, PromptMessage, Root
from trimcp.server._content import content_block, wire_message
from trimcp.server._conversion import convert_value
from trimcp.server._schema import derive_output_schema
from trimcp.server._validation import compiled_validator
from trimcp.server._values import to_jsonable

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from trimcp.protocol import ClientCapabilities, JsonObject, JsonValue

__all__ = [
    "SampleResult",
    "SamplingOptions",
    "elicitation_schema",
    "read_elicit_result",
    "read_roots",
    "read_sample_result",
    "require_capability",
    "sampling_params",
]


def require_capability(capabilities: ClientCapabilities, flag: str, what: str) -> None:
    """Raise ``ClientCapabilityMissing`` unless ``flag`` is set in the client's declaration."""
    if getattr(capabilities, flag) is not True:
        raise ClientCapabilityMissing(
            f"{what} needs the client capability {flag.replace('_', '.')}"
        )


# --- sampling --------------------------------------------------------------------------------


class SamplingOptions(TypedDict, total=False):
    """Optional ``sampling/createMessage`` params (``max_tokens`` is required separately).

    ``tools`` are wire ``Tool`` objects and need the client's ``sampling.tools``;
    ``include_context`` values other than ``"none"`` are soft-deprecated (2025-11-25).
    ``timeout`` (seconds) overrides the session's request timeout. ``key`` names the ask
    in a 2026-07-28 ``InputRequiredResult`` (default: ``sampling``, ``sampling-2``, ...).
    """

    system_prompt: str
    temperature: float
    model_preferences: Mapping[str, object]
    include_context: Literal["none", "thisServer", "allServers"]
    tools: Sequence[Mapping[str, object]]
    tool_choice: Mapping[str, object]
    stop_sequences: Sequence[str]
    metadata: Mapping[str, object]
    timeout: float
    key: str


_SAMPLING_KEYS = {
    "system_prompt": "systemPrompt",
    "temperature": "temperature",
    "model_preferences": "modelPreferences",
    "include_context": "includeContext",
    "tools": "tools",
    "tool_choice": "toolChoice",
    "stop_sequences": "stopSequences",
    "metadata": "metadata",
}


def _sampling_message(message: object) -> JsonValue:
    if isinstance(message, str):
        return {"role": "user", "content": content_block(message)}
    if isinstance(message, PromptMessage):
        return wire_message(message)
    to_wire = getattr(message, "to_wire", None)
    if callable(to_wire):
        return typing.cast("JsonValue", to_wire())
    return to_jsonable(message)


def sampling_params(
    messages: str | Sequence[object], max_tokens: int, options: SamplingOptions
) -> JsonObject:
    """Build ``sampling/createMessage`` params; a bare string is one user text message."""
    items = [messages] if isinstance(messages, str) else list(messages)
    params: JsonObject = {
        "messages": [_sampling_message(item) for item in items],
        "maxTokens": max_tokens,
    }
    for key, wire in _SAMPLING_KEYS.items():
        if key in options:
            params[wire] = to_jsonable(options[key])  # type: ignore[literal-required]
    return params


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class SampleResult:
    """What the client's model produced (``CreateMessageResult``)."""

    role: str
    content: JsonValue
    model: str
    stop_reason: str | None
    raw: JsonObject

    @property
    def text(self) -> str:
        """The text of the content's text blocks, joined (``""`` if there are none)."""
        blocks = self.content if isinstance(self.content, list) else [self.content]
        return "".join(
            str(block.get("text", ""))
            for block in blocks
            if isinstance(block, dict) and block.get("type") == "text"
        )


def read_sample_result(result: JsonObject) -> SampleResult:
    """Read a ``CreateMessageResult``; missing members become empty values."""
    stop = result.get("stopReason")
    return SampleResult(
        role=str(result.get("role", "assistant")),
        content=result.get("content"),
        model=str(result.get("model", "")),
        stop_reason=stop if isinstance(stop, str) else None,
        raw=result,
    )


# --- elicitation -----------------------------------------------------------------------------

_ACTIONS: dict[str, ElicitAction] = {"accept": "accept", "decline": "decline", "cancel": "cancel"}


def elicitation_schema(schema_or_type: Mapping[str, object] | type) -> JsonObject:
    """Return the flat ``requestedSchema`` for a JSON Schema dict or a class.

    Raises:
        SchemaError: the class cannot be described.
        ValueError: the schema is not a flat object of primitive properties.
    """
    if isinstance(schema_or_type, type):
        raw = derive_output_schema(schema_or_type).schema
    else:
        raw = typing.cast("JsonObject", to_jsonable(dict(schema_or_type)))
    properties = raw.get("properties")
    if raw.get("type") != "object" or not isinstance(properties, dict) or "$defs" in raw:
        raise ValueError(
            "an elicitation schema is a flat object of primitive properties (MCP 2025-11-25, "
            "Elicitation > Requested Schema)"
        )
    schema: JsonObject = {"type": "object", "properties": properties}
    if "required" in raw:
        schema["required"] = raw["required"]
    return schema


def read_elicit_result(
    result: JsonObject, schema: JsonObject, target: Mapping[str, object] | type | None
) -> ElicitResult:
    """Read an ``ElicitResult``, validating (and converting) accepted form content.

    Raises:
        ElicitationError: an unknown action, or accepted content that breaks ``schema``.
    """
    raw_action = result.get("action")
    action = _ACTIONS.get(raw_action) if isinstance(raw_action, str) else None
    if action is None:
        raise ElicitationError(f"the client answered with an unknown action {raw_action!r}")
    if action != "accept" or not schema:
        return ElicitResult(action=action)
    content = result.get("content", {})
    errors = sorted(compiled_validator(schema).iter_errors(content), key=str)
    if errors:
        raise ElicitationError(
            f"the client's answer breaks the requested schema: {errors[0].message}"
        )
    if isinstance(target, type):
        try:
            return ElicitResult(action="accept", content=convert_value(target, content))
        except ArgumentError as exc:
            raise ElicitationError(f"the client's answer does not convert: {exc}") from exc
    return ElicitResult(action="accept", content=content)


# --- roots -----------------------------------------------------------------------------------


def read_roots(result: JsonObject) -> list[Root]:
    """Read a ``ListRootsResult``, skipping malformed entries."""
    roots = result.get("roots")
    found: list[Root] = []
    for index, item in enumerate(roots if isinstance(roots, list) else []):
        # One malformed entry should not hide the client's other roots from a tool.
        with contextlib.suppress(RemoteProtocolError):
            found.append(Root.from_wire(Fields(item, f"roots/list: roots[{index}]")))
    return found
