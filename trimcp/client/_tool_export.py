"""A host's MCP tools as function definitions in the shapes the common LLM APIs take.

* ``openai``: Chat Completions ``tools`` entries,
  ``{"type": "function", "function": {"name", "description", "parameters"}}``;
* ``openai-responses``: the Responses API's flat ``{"type": "function", "name", ...}``;
* ``anthropic``: Messages API ``tools`` entries, ``{"name", "description", "input_schema"}``;
* ``gemini``: ``functionDeclarations`` entries, ``{"name", "description", "parameters"}``
  with the schema reduced to the OpenAPI subset Gemini accepts (no ``$schema``, ``$id``,
  ``$defs``/``$ref``, ``additionalProperties``, ``const`` ...; ``$ref`` is inlined where the
  definition is local, and cycles end in an empty object schema).

Names are the qualified ``mcp__<server>__<tool>`` (``_naming.py``), which all of them accept.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, final

__all__ = ["EXPORT_FORMATS", "ExportFormat", "HostTool", "export_tools"]

ExportFormat = Literal["openai", "openai-responses", "anthropic", "gemini"]
EXPORT_FORMATS: Final = ("openai", "openai-responses", "anthropic", "gemini")

_GEMINI_DROPPED: Final = frozenset(
    {
        "$schema",
        "$id",
        "$defs",
        "definitions",
        "$comment",
        "additionalProperties",
        "unevaluatedProperties",
        "patternProperties",
        "const",
        "examples",
        "default",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "dependentRequired",
        "propertyNames",
        "contentEncoding",
        "contentMediaType",
        "readOnly",
        "writeOnly",
        "deprecated",
    }
)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class HostTool:
    """One server's tool as a host offers it.

    Attributes:
        qualified_name: ``mcp__<server>__<tool>``.
        server: the configured server's name.
        name: the tool's own name on its server.
        title: its display name, if the server gave one.
        description: what it does (shown to the model).
        input_schema: its arguments' JSON Schema.
        output_schema: its structured result's JSON Schema, if any.
        annotations: the server's hints (readOnlyHint, destructiveHint, ...), if any.
    """

    qualified_name: str
    server: str
    name: str
    title: str | None = None
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    output_schema: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None


def _description(tool: HostTool) -> str:
    text = tool.description or tool.title or tool.name
    return f"{text} (tool {tool.name!r} of MCP server {tool.server!r})"


def _object_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(schema))
    out.setdefault("type", "object")
    if out.get("type") == "object":
        out.setdefault("properties", {})
    return out


def _gemini_schema(
    node: object, defs: Mapping[str, Any], seen: frozenset[str] = frozenset()
) -> object:
    if isinstance(node, list):
        return [_gemini_schema(item, defs, seen) for item in node]
    if not isinstance(node, Mapping):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if ref.startswith(("#/$defs/", "#/definitions/")) and name in defs and name not in seen:
            return _gemini_schema(defs[name], defs, seen | {name})
        return {"type": "object"}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _GEMINI_DROPPED:
            continue
        if key == "type" and isinstance(value, list):
            # Gemini takes one type; ["string", "null"] becomes string + nullable.
            kinds = [kind for kind in value if kind != "null"]
            out["type"] = kinds[0] if kinds else "null"
            if "null" in value:
                out["nullable"] = True
            continue
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {name: _gemini_schema(sub, defs, seen) for name, sub in value.items()}
            continue
        out[key] = _gemini_schema(value, defs, seen)
    return out


def _gemini(tool: HostTool) -> dict[str, Any]:
    schema = _object_schema(tool.input_schema)
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    return {
        "name": tool.qualified_name,
        "description": _description(tool),
        "parameters": _gemini_schema(schema, defs),
    }


def export_tools(tools: Sequence[HostTool], shape: ExportFormat) -> list[dict[str, Any]]:
    """Return ``tools`` as function definitions for ``shape`` (see the module docstring)."""
    if shape not in EXPORT_FORMATS:
        raise ValueError(
            f"unknown export format {shape!r}; choose one of {', '.join(EXPORT_FORMATS)}"
        )
    out: list[dict[str, Any]] = []
    for tool in tools:
        if shape == "gemini":
            out.append(_gemini(tool))
            continue
        schema = _object_schema(tool.input_schema)
        if shape == "anthropic":
            out.append(
                {
                    "name": tool.qualified_name,
                    "description": _description(tool),
                    "input_schema": schema,
                }
            )
        elif shape == "openai":
            function = {
                "name": tool.qualified_name,
                "description": _description(tool),
                "parameters": schema,
            }
            out.append({"type": "function", "function": function})
        else:
            out.append(
                {
                    "type": "function",
                    "name": tool.qualified_name,
                    "description": _description(tool),
                    "parameters": schema,
                }
            )
    return out
