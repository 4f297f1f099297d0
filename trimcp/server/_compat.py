"""Answers shaped for the protocol version a session negotiated (each revision's
changelog, e.g. https://modelcontextprotocol.io/specification/2025-11-25/changelog).

Definitions and results are built once, in the newest shape (2025-11-25). A session that
negotiated an older version gets them without the fields its version does not define: a
strict client of that version (one that validates against its own schema) must not trip
over ``title``, ``icons``, ``outputSchema``, ``execution`` or content types it has never
heard of. Content blocks an older version lacks are turned into text that says what they
were, so nothing is silently lost: a ``resource_link`` (2025-06-18) becomes its URI, an
``audio`` block (2025-03-26) a note with its MIME type.

For the newest version every function returns its argument unchanged (no copying on the
hot path).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject, JsonValue, VersionFeatures

__all__ = [
    "call_result_for",
    "definition_for",
    "prompt_result_for",
]


def _without(item: JsonObject, keys: list[str]) -> JsonObject:
    if not any(key in item for key in keys):
        return item
    return {key: value for key, value in item.items() if key not in keys}


def definition_for(kind: str, item: JsonObject, features: VersionFeatures) -> JsonObject:
    """Return a ``Tool``/``Prompt``/``Resource``/``ResourceTemplate`` for ``features``.

    ``kind`` is ``"tool"``, ``"prompt"``, ``"resource"`` or ``"template"``.
    """
    dropped: list[str] = []
    if not features.icons:
        dropped.append("icons")
    if not features.titles:
        dropped.append("title")
    if kind == "tool":
        if not features.tasks:
            dropped.append("execution")
        if not features.structured_content:
            dropped += ["outputSchema", "_meta"]
        if not features.tool_annotations:
            dropped.append("annotations")
    trimmed = _without(item, dropped)
    if kind == "prompt" and not features.titles and isinstance(trimmed.get("arguments"), list):
        arguments: list[JsonValue] = [
            _without(argument, ["title"]) if isinstance(argument, dict) else argument
            for argument in trimmed["arguments"]  # type: ignore[union-attr]
        ]
        trimmed = {**trimmed, "arguments": arguments}
    return trimmed


def _block_for(block: JsonValue, features: VersionFeatures) -> JsonValue:
    if not isinstance(block, dict):
        return block
    kind = block.get("type")
    if kind == "resource_link" and not features.resource_links:
        name = block.get("name")
        label = f"{name}: " if isinstance(name, str) and name else ""
        return {"type": "text", "text": f"{label}{block.get('uri')}"}
    if kind == "audio" and not features.audio_content:
        return {"type": "text", "text": f"[audio content, {block.get('mimeType')}]"}
    return block


def _blocks_for(blocks: JsonValue, features: VersionFeatures) -> JsonValue:
    if not isinstance(blocks, list):
        return blocks
    return [_block_for(block, features) for block in blocks]


def _changes_content(features: VersionFeatures) -> bool:
    return not (features.resource_links and features.audio_content)


def call_result_for(result: JsonObject, features: VersionFeatures) -> JsonObject:
    """Return a ``CallToolResult`` for ``features`` (``structuredContent`` needs 2025-06-18).

    The text copy of structured content stays, so older clients still see the data.
    """
    if features.structured_content and not _changes_content(features):
        return result
    trimmed = result if features.structured_content else _without(result, ["structuredContent"])
    if _changes_content(features) and "content" in trimmed:
        trimmed = {**trimmed, "content": _blocks_for(trimmed["content"], features)}
    return trimmed


def prompt_result_for(result: JsonObject, features: VersionFeatures) -> JsonObject:
    """Return a ``GetPromptResult`` whose message content ``features`` knows."""
    messages = result.get("messages")
    if not _changes_content(features) or not isinstance(messages, list):
        return result
    converted: list[JsonValue] = [
        {**message, "content": _block_for(message.get("content"), features)}
        if isinstance(message, dict)
        else message
        for message in messages
    ]
    return {**result, "messages": converted}
